"""The privacy ledger: every release of one dataset for one privacy unit, across runs, in one
SQLite file (stdlib ``sqlite3``, WAL); docs/ledger.md.

Life: :meth:`Ledger.init` writes a new file with the dataset's name, the unit and the lifetime
budget; a run calls :meth:`Ledger.reserve` *before* drawing any noise -- one ``BEGIN
IMMEDIATE`` transaction reads every stored spend, composes it with the run's
(:func:`~.spend.lifetime_total`), refuses when the lifetime budget would be exceeded and
otherwise records the spend as ``reserved`` -- and :meth:`Ledger.delivered` once the run's
outputs are in place. A reservation never marked delivered still counts: a crash after
recording costs budget, never privacy. :meth:`Ledger.show` lists the runs with their running
totals; :meth:`Ledger.verify` recomputes every running total from the stored mechanisms.

A file is refused, with one line naming it, when it is not an optnoise ledger (another
SQLite database, or not SQLite at all), is corrupted or truncated, was written by a newer
optnoise, or (for a run) cannot be written.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
import stat
import uuid
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import InvalidParameterError, OptnoiseError
from ..target import Target
from .spend import (Shift, Spend, StoredPart, canonical, describe_remaining, lifetime_total, own_spend, pack,
                    rebuild, sha256, shown, stored, unpack, weights_digest)

#: ``format`` of a ledger's meta table.
FORMAT = "optnoise.ledger"
#: The schema this version writes and reads; a file with a larger one is refused, one with a
#: smaller one migrated when opened for writing (:data:`MIGRATIONS`) and read as it is otherwise.
#: 2: each run's ``shifts`` (a selection of keys found in the data, a statistic composed by its
#: declared target after a bound chosen privately), added to every total.
SCHEMA_VERSION = 2
#: The statements that bring a file of schema ``v`` to ``v + 1``, run in one transaction with
#: the version's update (a version-1 run has no shifts: ``'[]'``).
MIGRATIONS = {1: ("ALTER TABLE runs ADD COLUMN shifts TEXT NOT NULL DEFAULT '[]'",)}
#: ``PRAGMA application_id`` of a ledger ("OPNL"): another SQLite database has another.
APPLICATION_ID = 0x4F504E4C
#: Seconds a run waits for another run's transaction before giving up.
TIMEOUT = 60.0

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE mechanisms (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('reserved', 'delivered')),
    reserved_at TEXT NOT NULL,
    delivered_at TEXT,
    spec_sha256 TEXT,
    statistics TEXT NOT NULL,
    parts TEXT NOT NULL,
    spend TEXT NOT NULL,
    total TEXT NOT NULL,
    audit TEXT NOT NULL,
    shifts TEXT NOT NULL DEFAULT '[]'
);
"""


class LedgerMismatchError(OptnoiseError):
    """``verify`` found a stored total (or mechanism) that its recomputation does not match
    (CLI exit 1); ``report`` holds the whole report."""

    def __init__(self, message: str, report: dict) -> None:
        self.report = report
        super().__init__(message)


@dataclass(frozen=True)
class Reservation:
    """A recorded spend: the run's id (for :meth:`Ledger.delivered`), the run's own basic
    spend and the ledger's running total with it."""

    run_id: str
    spend: dict
    total: dict


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def _bad(path: Any, accepted: str) -> InvalidParameterError:
    return InvalidParameterError("ledger", str(path), accepted)


class Ledger:
    """An open ledger file (``write=False``: for reading only, e.g. ``show``/``verify``).

    Opening checks the file (an optnoise ledger of a schema this version reads, intact:
    ``PRAGMA quick_check``) and, for writing, that it and its folder can be written -- before
    any run does any work.
    """

    def __init__(self, path: str | os.PathLike, *, write: bool = True, timeout: float = TIMEOUT) -> None:
        self.path = Path(path)
        self.write = write
        self.timeout = float(timeout)
        self._profiles: dict[str, Any] = {}   # mechanism digest -> exact profile of its quantized weights
        self._weights: dict[str, str] = {}    # mechanism digest -> digest of those weights
        self._check_file()
        with self._session() as con:
            self._meta = self._read_meta(con)
            if self.write and int(self._meta["schema_version"]) < SCHEMA_VERSION:
                self._migrate(con)
        self.dataset: str = self._meta["dataset"]
        self.unit: str = self._meta["unit"]
        self.budget: Target = Target.from_json(json.loads(self._meta["budget"]), parameter="ledger")

    # ------------------------------------------------------------------ files
    @classmethod
    def init(cls, path: str | os.PathLike, *, dataset: str, unit: str, budget: Target) -> "Ledger":
        """Write a new ledger (never over an existing file: a ledger is history) for
        ``dataset`` and ``unit`` (names a run must repeat) under the lifetime ``budget``
        (``Target.of(epsilon, delta)`` or ``Target.attack(...)``; a DP or attack target)."""
        target = Path(path)
        for name, value in (("dataset", dataset), ("unit", unit)):
            if not isinstance(value, str) or not value.strip():
                raise InvalidParameterError(name, value, "a non-empty name")
        if not isinstance(budget, Target) or budget.notion == "pdp":
            raise InvalidParameterError("budget", budget, "a DP budget Target.of(epsilon, delta) or an attack budget "
                                        "Target.attack(max_tpr=, at_fpr=) / (max_mu=)")
        if target.exists() or target.is_symlink():
            raise _bad(path, "a new path (it exists; a ledger is never replaced: it is the record of what was "
                             "spent)")
        if not target.parent.is_dir() or not os.access(target.parent, os.W_OK):
            raise _bad(path, "a path in an existing folder this user can write")
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            con = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute(f"PRAGMA application_id={APPLICATION_ID}")
                con.execute("BEGIN IMMEDIATE")
                for statement in filter(str.strip, SCHEMA.split(";")):
                    con.execute(statement)
                meta = {"format": FORMAT, "schema_version": str(SCHEMA_VERSION), "dataset": dataset, "unit": unit,
                        "budget": canonical(budget.to_json()), "created": _now()}
                con.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                con.execute("COMMIT")
            finally:
                con.close()
            os.link(tmp, target)   # atomic, and refuses a file that appeared meanwhile
        except FileExistsError as exc:
            raise _bad(path, "a new path (it appeared while the ledger was written)") from exc
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
                leftover.unlink(missing_ok=True)
        return cls(target)

    def _check_file(self) -> None:
        p = self.path
        if not p.is_file():
            raise _bad(p, "an existing ledger file (optnoise ledger init PATH makes one)")
        if self.write:
            mode = p.stat().st_mode
            if not os.access(p, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
                raise _bad(p, "a ledger file this user can write (it is read-only: a run records its spend "
                              "before any noise is drawn)")
            if not os.access(p.parent, os.W_OK):
                raise _bad(p, "a ledger in a folder this user can write (SQLite keeps its journal beside it)")
        with open(p, "rb") as fh:
            head = fh.read(100)
        if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
            what = "an empty file" if not head else "not an SQLite file, or one cut short"
            raise _bad(p, f"an optnoise ledger file (this is {what})")

    @contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """An open connection, closed on leaving; SQLite's failures (a lock held past the
        timeout, a full disk) become one line naming the ledger (CLI exit 1)."""
        try:
            with closing(self._connect()) as con:
                yield con
        except sqlite3.OperationalError as exc:
            hint = f" for {self.timeout:g} s: another run holds it" if "locked" in str(exc) else ""
            raise OptnoiseError(f"ledger {self.path}: {exc}{hint} (this call changed nothing)") from exc

    def _connect(self) -> sqlite3.Connection:
        mode = "rw" if self.write else "ro"
        try:
            con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode={mode}", uri=True, timeout=self.timeout,
                                  isolation_level=None)
        except sqlite3.Error as exc:
            raise _bad(self.path, f"a ledger file SQLite can open ({exc})") from exc
        try:
            con.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as exc:
            con.close()
            raise _bad(self.path, f"an intact optnoise ledger (SQLite: {exc}: corrupted or truncated)") from exc
        return con

    def _read_meta(self, con: sqlite3.Connection) -> dict:
        try:
            app = con.execute("PRAGMA application_id").fetchone()[0]
            check = con.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise _bad(self.path, f"an intact optnoise ledger (SQLite: {exc}: corrupted or truncated)") from exc
        if check != [("ok",)]:
            raise _bad(self.path, f"an intact optnoise ledger (SQLite's check: {check[0][0]}: corrupted or "
                                  "truncated)")
        if app != APPLICATION_ID:
            raise _bad(self.path, "an optnoise ledger (this is another SQLite database)")
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise _bad(self.path, f"an intact optnoise ledger (no meta table: {exc})") from exc
        if meta.get("format") != FORMAT:
            raise _bad(self.path, f"an optnoise ledger (its format is {meta.get('format')!r}, not {FORMAT!r})")
        version = meta.get("schema_version", "")
        if not version.isdigit() or int(version) > SCHEMA_VERSION:
            raise _bad(self.path, f"a ledger of schema version {SCHEMA_VERSION} or older (it has {version!r}: "
                                  "written by a newer optnoise; upgrade to read it)")
        missing = {"dataset", "unit", "budget"} - set(meta)
        if missing:
            raise _bad(self.path, f"an intact optnoise ledger (its meta table lacks {', '.join(sorted(missing))})")
        return meta

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Bring an older file to :data:`SCHEMA_VERSION` in one ``BEGIN IMMEDIATE`` transaction
        (the version read again inside it: two runs opening one old file migrate it once); a
        crash leaves the old file as it was."""
        with _immediate(con):
            version = int(dict(con.execute("SELECT key, value FROM meta").fetchall())["schema_version"])
            for v in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[v]:
                    con.execute(statement)
            con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        self._meta["schema_version"] = str(SCHEMA_VERSION)

    def _shifts_column(self) -> str:
        """The runs' shifts as a query reads them: the column, or none in a version-1 file read only."""
        return "shifts" if int(self._meta["schema_version"]) >= 2 else "'[]'"

    # ------------------------------------------------------------------ runs
    def check(self, *, dataset: str, unit: str) -> None:
        """Refuse a run on another dataset or unit than the ledger's (before any work)."""
        if dataset != self.dataset:
            raise _bad(self.path, f"the ledger of dataset {dataset!r} (this one records {self.dataset!r})")
        if unit != self.unit:
            raise _bad(self.path, f"a ledger for the unit {unit!r} (this one records the unit {self.unit!r})")

    def reserve(self, spend: Spend, *, run_id: str | None = None) -> Reservation:
        """Record ``spend`` before any noise is drawn, or refuse it.

        In one ``BEGIN IMMEDIATE`` transaction (one writer at a time; readers are not
        blocked under WAL): read every stored spend, delivered or not, compose them with this
        one (:func:`~.spend.lifetime_total`), and either refuse (``InvalidParameterError``
        naming the ledger, the budget and what remains; nothing is stored) or insert the spend
        as ``reserved`` and commit. Call :meth:`delivered` with the returned ``run_id`` once the
        outputs are in place.

        Proof: docs/proofs/ledger-total.md
        """
        if not self.write:
            raise _bad(self.path, "a ledger opened for writing (Ledger(path), not write=False)")
        self.check(dataset=spend.dataset, unit=spend.unit)
        new = [stored(p) for p in spend.parts]
        shifts = list(spend.shifts)
        for (sp, _), part in zip(new, spend.parts):
            if sp.mechanism_sha256 not in self._profiles:
                self._profiles[sp.mechanism_sha256] = _profile(part.mechanism)
                self._weights[sp.mechanism_sha256] = sp.weights_sha256
        run_id = run_id or uuid.uuid4().hex
        with self._session() as con, _immediate(con):
            if con.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None:
                raise InvalidParameterError("run_id", run_id, f"a run id not yet recorded in {self.path}")
            rows = con.execute("SELECT parts, total, shifts FROM runs ORDER BY seq").fetchall()
            before = [StoredPart.from_json(p) for parts, _, _ in rows for p in json.loads(parts)]
            moved = [Shift.from_json(x) for _, _, run in rows for x in json.loads(run)] + shifts
            self._load_profiles(con, before)
            total = lifetime_total(before + [sp for sp, _ in new], self._profiles, self.budget, moved)
            if not total["within_budget"]:
                last = json.loads(rows[-1][1]) if rows else None
                raise self._refusal(total, last, len(rows))
            con.executemany("INSERT OR IGNORE INTO mechanisms VALUES (?, ?)",
                            [(sp.mechanism_sha256, pack(text)) for sp, text in new])
            spent = own_spend([sp for sp, _ in new], shifts)
            con.execute("INSERT INTO runs (run_id, state, reserved_at, spec_sha256, statistics, parts, spend, total,"
                        " audit, shifts) VALUES (?, 'reserved', ?, ?, ?, ?, ?, ?, ?, ?)",
                        (run_id, _now(), spend.spec_sha256, canonical(list(spend.statistics)),
                         canonical([sp.to_json() for sp, _ in new]), canonical(spent), canonical(total),
                         canonical(dict(spend.audit)), canonical([x.to_json() for x in shifts])))
        return Reservation(run_id, spent, total)

    def _refusal(self, total: dict, last: dict | None, runs: int) -> InvalidParameterError:
        basic, p = total["basic"], total["pld"]
        would = (f"basic eps {shown(basic['epsilon'])}, delta {shown(basic['delta'], 3)}; PLD eps "
                 f"{shown(p['epsilon'])} at delta {p['delta']:g}")
        a, b = total["attack"], self.budget
        if b.max_tpr is not None:
            would += f"; TPR {shown(a['tpr_at_fpr'][f'{b.at_fpr:g}'])} at FPR {b.at_fpr:g}"
        if b.max_mu is not None:
            would += f"; mu {shown(a['mu_gdp'])}"
        return _bad(self.path, f"a run within the lifetime budget {self.budget.describe()} of {self.dataset!r} "
                               f"per {self.unit}: with the {runs} run(s) recorded this one would total {would}; "
                               f"what remains: {describe_remaining(last, self.budget)} (nothing was recorded and "
                               f"no noise drawn)")

    def _load_profiles(self, con: sqlite3.Connection, parts: list[StoredPart]) -> None:
        """The exact profile of every stored mechanism not yet known, rebuilt from its JSON;
        refused when it no longer quantizes to the weights that were certified (the total must
        compose what was sampled)."""
        for part in parts:
            digest = part.mechanism_sha256
            if digest not in self._profiles:
                row = con.execute("SELECT body FROM mechanisms WHERE sha256 = ?", (digest,)).fetchone()
                if row is None:
                    raise _bad(self.path, f"an intact optnoise ledger (mechanism {digest[:12]} of a run is missing)")
                mechanism = rebuild(unpack(row[0]))
                self._weights[digest], self._profiles[digest] = weights_digest(mechanism), _profile(mechanism)
            if self._weights[digest] != part.weights_sha256:
                raise OptnoiseError(f"ledger {self.path}: mechanism {digest[:12]} no longer quantizes to the "
                                    "weights that were certified (optnoise ledger verify shows where)")

    def delivered(self, run_id: str) -> None:
        """Mark a reserved run delivered (its outputs are in place); idempotent."""
        with self._session() as con, _immediate(con):
            found = con.execute("UPDATE runs SET state = 'delivered', delivered_at = ? WHERE run_id = ? AND "
                                "state = 'reserved'", (_now(), run_id)).rowcount
            if not found and con.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise InvalidParameterError("run_id", run_id, f"a run recorded in {self.path}")

    # ------------------------------------------------------------------ reading
    def runs(self) -> list[dict]:
        """Every run, oldest first: its id, state, times, spec hash, statistics, own spend, parts,
        the running total after it, and (private) its audit fields."""
        with self._session() as con:
            rows = con.execute("SELECT seq, run_id, state, reserved_at, delivered_at, spec_sha256, statistics, "
                               f"parts, spend, total, audit, {self._shifts_column()} FROM runs ORDER BY seq"
                               ).fetchall()
        keys = ("seq", "run_id", "state", "reserved_at", "delivered_at", "spec_sha256")
        return [{**dict(zip(keys, r[:6])), "statistics": json.loads(r[6]), "parts": json.loads(r[7]),
                 "spend": json.loads(r[8]), "total": json.loads(r[9]), "audit": json.loads(r[10]),
                 "shifts": json.loads(r[11])} for r in rows]

    def show(self, *, audit: bool = False) -> dict:
        """The ledger as a document (keys: docs/cli.md, ``ledger show``): the dataset, unit and
        budget, each run (when, spec hash, statistics, spend, the running total in ``(epsilon,
        delta)`` and attack terms, what remains) and the current total. ``audit``: also each
        run's private audit fields (never to be published)."""
        runs = []
        for r in self.runs():
            t = r["total"]
            run = {k: r[k] for k in ("seq", "run_id", "state", "reserved_at", "delivered_at", "spec_sha256",
                                     "statistics", "spend")}
            if r["shifts"]:
                run["shifts"] = r["shifts"]
            run["total"] = {k: t[k] for k in ("basic", "pld", "attack", "within_budget", "shifts") if k in t}
            run["remaining"] = t["remaining"]
            if audit:
                run["audit"] = r["audit"]
            runs.append(run)
        current = runs[-1]["total"] if runs else None
        return {"format": FORMAT, "schema_version": int(self._meta["schema_version"]), "ledger": str(self.path),
                "dataset": self.dataset, "unit": self.unit, "budget": self.budget.to_json(),
                "created": self._meta.get("created"), "runs": runs, "total": current,
                "remaining": runs[-1]["remaining"] if runs else _whole(self.budget),
                "undelivered": sum(r["state"] == "reserved" for r in runs),
                "counts": "every run recorded, delivered or not (a reservation never delivered still counts)"}

    def verify(self, *, strict: bool = True) -> dict:
        """Recompute every running total from the stored mechanisms and compare.

        Checks: each stored mechanism's JSON has its digest; each rebuilt mechanism quantizes
        to the weights that were certified (their digest); each run's own spend and the
        running total after it equal their recomputation (basic sums exactly, composed values
        to :data:`AGREEMENT` relative) and meet the budget. Returns the report (``ok``,
        ``runs``, ``mismatches``, ``total``); with ``strict`` a mismatch raises
        :class:`LedgerMismatchError` (one line; the report attached).
        """
        with self._session() as con:
            bodies = dict(con.execute("SELECT sha256, body FROM mechanisms").fetchall())
        report = check_runs(self.runs(), bodies, self.budget)
        report = {"ledger": str(self.path), "dataset": self.dataset, "unit": self.unit,
                  "budget": self.budget.to_json(), **report}
        if strict and not report["ok"]:
            first = report["mismatches"][0]
            raise LedgerMismatchError(f"ledger {self.path} does not verify: {first} "
                                      f"({len(report['mismatches'])} mismatch(es) in all)", report)
        return report


#: Relative agreement of a recomputed composed value (PLD, attack) with the stored one; the
#: basic sums are exact and must agree exactly.
AGREEMENT = 1e-9


def check_runs(runs: list[dict], bodies: dict[str, bytes], budget: Target) -> dict:
    """Recompute every run's spend and running total from the stored mechanisms (``bodies``:
    digest -> compressed JSON) and list every disagreement (:meth:`Ledger.verify`)."""
    mismatches: list[str] = []
    profiles, weights = _rebuilt(bodies, mismatches)
    so_far: list[StoredPart] = []
    moved: list[Shift] = []
    checked, total = [], None
    for r in runs:
        where = f"run {r['seq']} ({r['run_id'][:12]})"
        if (r["state"] == "delivered") != (r["delivered_at"] is not None):
            mismatches.append(f"{where}: state {r['state']} with delivered_at {r['delivered_at']}")
        parts = [StoredPart.from_json(p) for p in r["parts"]]
        lost = [p for p in parts if p.mechanism_sha256 not in profiles]
        for p in parts:
            if p not in lost and weights[p.mechanism_sha256] != p.weights_sha256:
                mismatches.append(f"{where}: mechanism {p.mechanism_sha256[:12]} no longer quantizes to the weights "
                                  "that were certified")
        if lost:
            mismatches.append(f"{where}: mechanism {lost[0].mechanism_sha256[:12]} is missing or unreadable")
            continue
        shifts = [Shift.from_json(x) for x in r.get("shifts", [])]
        so_far += parts
        moved += shifts
        total = lifetime_total(so_far, profiles, budget, moved)
        mismatches += [f"{where}: {m}" for m in _differences(r["spend"], own_spend(parts, shifts), "spend")]
        mismatches += [f"{where}: {m}" for m in _differences(r["total"], total, "total")]
        if not total["within_budget"]:
            mismatches.append(f"{where}: the running total exceeds the budget {budget.describe()}")
        checked.append({"seq": r["seq"], "run_id": r["run_id"], "state": r["state"], "basic": total["basic"],
                        "pld": total["pld"]})
    return {"ok": not mismatches, "runs": len(runs), "delivered": sum(r["state"] == "delivered" for r in runs),
            "reserved": sum(r["state"] == "reserved" for r in runs), "mechanisms": len(bodies),
            "mismatches": mismatches, "checked": checked, "total": total}


def _rebuilt(bodies: dict[str, bytes], mismatches: list[str]) -> tuple[dict, dict]:
    """Each stored mechanism's exact profile and weights digest, from its JSON (whose digest is
    checked first)."""
    import zlib
    profiles, weights = {}, {}
    for digest, body in bodies.items():
        try:
            text = unpack(body)
        except (zlib.error, UnicodeDecodeError):
            mismatches.append(f"mechanism {digest[:12]}: its stored body is not readable")
            continue
        if sha256(text) != digest:
            mismatches.append(f"mechanism {digest[:12]}: its stored JSON does not have this digest")
            continue
        mech = rebuild(text)
        profiles[digest], weights[digest] = _profile(mech), weights_digest(mech)
    return profiles, weights


def _differences(stored_value: Any, recomputed: Any, key: str) -> list[str]:
    """Where a stored JSON value and its recomputation disagree: numbers under ``basic`` (and
    counts) exactly, other numbers to :data:`AGREEMENT` relative, everything else exactly."""
    if isinstance(recomputed, dict):
        if not isinstance(stored_value, dict) or set(stored_value) != set(recomputed):
            return [f"{key}: stored keys {sorted(stored_value) if isinstance(stored_value, dict) else stored_value} "
                    f"!= {sorted(recomputed)}"]
        return [d for k in recomputed for d in _differences(stored_value[k], recomputed[k], f"{key}.{k}")]
    both = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (stored_value, recomputed))
    if both and ".basic." not in key + "." and not key.endswith("parts"):
        a, b = float(stored_value), float(recomputed)
        if a == b or abs(a - b) <= AGREEMENT * max(abs(a), abs(b)):
            return []
    elif stored_value == recomputed:
        return []
    return [f"{key} stored {stored_value!r}, recomputed {recomputed!r}"]


def _profile(mechanism: Any) -> Any:
    from .spend import exact_profile_of
    return exact_profile_of(mechanism)


def _whole(budget: Target) -> dict:
    if budget.notion == "attack":
        return {k: v for k, v in (("max_tpr", budget.max_tpr), ("at_fpr", budget.at_fpr), ("max_mu", budget.max_mu))
                if v is not None}
    return {"epsilon": budget.epsilon, "delta": budget.delta}


class _immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception)."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def __enter__(self) -> sqlite3.Connection:
        self.con.execute("BEGIN IMMEDIATE")
        return self.con

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        self.con.execute("COMMIT" if kind is None else "ROLLBACK")


def open_ledger(path: str | os.PathLike | None, unit: str) -> Ledger | None:
    """The ledger at ``path`` for a run on ``unit`` (``None``: no ledger): opened and checked
    before any work -- a damaged, foreign, newer or read-only file, or a ledger of another unit,
    refused with one line naming it. The run is charged to the ledger's own dataset."""
    if path is None:
        return None
    book = Ledger(path)
    book.check(dataset=book.dataset, unit=unit)
    return book


__all__ = ["open_ledger", "APPLICATION_ID", "FORMAT", "Ledger", "LedgerMismatchError", "Reservation", "SCHEMA_VERSION"]
