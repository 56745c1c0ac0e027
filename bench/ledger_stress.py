"""Stress of the privacy ledger (docs/ledger.md, issue 34): processes racing for a budget, and
runs killed with SIGKILL at random points.

Run: .venv/bin/python bench/ledger_stress.py [--processes 16] [--admits 5] [--kills 200]
     [--concurrent 8] [--per-ledger 4] [--seed 1] [--dir DIR]

* race: ``processes`` fresh interpreters (multiprocessing, spawn) open one ledger, wait at a
  barrier, and each reserve a spend of eps 3 (the geometric mechanism at eps 3, pure) against a
  pure lifetime budget of ``3 admits + 1``: exactly ``admits`` are recorded, the others refused
  with one line, nothing else written.
* kill: child processes (fork, so that a kill costs no interpreter start), ``concurrent`` at a
  time, each doing one run as a publisher does -- reserve (compose, ``BEGIN IMMEDIATE``,
  insert, commit), write its output atomically (a temporary file renamed), mark it delivered
  -- with random pauses, each killed with SIGKILL at a random time. Afterwards ``verify``
  accepts the ledger, every output has its recorded spend and every delivered run its output;
  the phases the kills landed in are counted.

tests/test_ledger.py runs both small (8 processes admitting 3; 50 kills); this script runs
them as large as asked and prints the counts and the times, with the load average.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import tempfile
import time
from pathlib import Path

#: What a killed child was doing, by the code it wrote before each step.
PHASES = {0: "starting", 1: "reserve (compose, transaction, commit)", 2: "draw", 3: "write output",
          4: "delivered", 5: "finished"}
#: The spend of every run here: the geometric mechanism at this epsilon (pure).
EPSILON = 3.0


def _spend(dataset: str = "survey", unit: str = "household"):
    import optnoise
    from optnoise.publish.spend import Spend
    mechanism = optnoise.geometric(epsilon=EPSILON)
    return Spend([(mechanism, 1)], dataset=dataset, unit=unit, spec_sha256="0" * 64, statistics=["employed"],
                 audit={"rows": 5400})


def new_ledger(path: str | os.PathLike, epsilon: float):
    """A ledger for the runs here, under a pure lifetime budget of ``epsilon``."""
    from optnoise.publish.ledger import Ledger
    from optnoise.target import Target
    return Ledger.init(path, dataset="survey", unit="household", budget=Target(epsilon))


# ------------------------------------------------------------------ race
def race_worker(path: str, barrier, results) -> None:
    """One racer (a fresh interpreter): open, wait for the others, reserve."""
    from optnoise.errors import InvalidParameterError
    from optnoise.publish.ledger import Ledger
    try:
        ledger, spend = Ledger(path), _spend()
        spend.parts[0].mechanism.quantize()
    finally:
        barrier.wait(timeout=600)
    try:
        results.put(("recorded", ledger.reserve(spend).run_id))
    except InvalidParameterError as exc:
        results.put(("refused", str(exc)))
    except Exception as exc:  # any other outcome is reported, never waited for
        results.put(("failed", repr(exc)))
        raise


def race(path: str | os.PathLike, processes: int, admits: int) -> dict:
    """``processes`` racers against a budget that admits ``admits`` spends; the outcomes."""
    new_ledger(path, EPSILON * admits + 1.0)
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=race_worker, args=(str(path), barrier, results)) for _ in range(processes)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return {"recorded": [v for k, v in outcomes if k == "recorded"], "refused": [v for k, v in outcomes if k == "refused"],
            "failed": [v for k, v in outcomes if k == "failed"], "exit_codes": [p.exitcode for p in procs],
            "seconds": time.perf_counter() - t0}


# ------------------------------------------------------------------ kill
def kill_worker(ledger, outdir: str, phase, slot: int, seed: int) -> None:
    """One run as a publisher does it, with random pauses; ``phase[slot]`` says where it is."""
    rng = random.Random(seed)
    spend = _spend()
    phase[slot] = 1
    reservation = ledger.reserve(spend)
    phase[slot] = 2
    noise = spend.parts[0].mechanism.sample(1000)
    time.sleep(rng.uniform(0, 0.02))
    phase[slot] = 3
    final = Path(outdir) / f"{reservation.run_id}.json"
    tmp = final.with_suffix(".tmp")
    tmp.write_text(json.dumps({"run_id": reservation.run_id, "released": int(noise[0])}))
    time.sleep(rng.uniform(0, 0.01))
    os.replace(tmp, final)
    phase[slot] = 4
    ledger.delivered(reservation.run_id)
    phase[slot] = 5


def kill(directory: str | os.PathLike, kills: int, *, concurrent: int = 5, per_ledger: int = 1, seed: int = 1,
         max_tries: int | None = None) -> dict:
    """Kill runs with SIGKILL until ``kills`` children died by it: ``concurrent`` children at a
    time on one ledger (a new ledger every ``per_ledger`` rounds, ``ledger-I.db`` with outputs
    in ``out-I/``), each armed at a phase drawn at random (reserve, draw, write, delivered) and
    killed a random time after reaching it (within a run's duration for the reserve, 30 ms
    for the others); the phases the kills landed in."""
    directory = Path(directory)
    ctx, rng = mp.get_context("fork"), random.Random(seed)
    phase = ctx.Array("i", concurrent, lock=False)   # a child killed holding a lock would hang the parent
    landed: dict[str, int] = {}
    killed = tries = rounds = 0
    duration = None
    t0 = time.perf_counter()
    while killed < kills and tries < (max_tries or 4 * kills):
        if rounds % per_ledger == 0:
            i = rounds // per_ledger
            ledger, outdir = new_ledger(directory / f"ledger-{i}.db", 1e6), directory / f"out-{i}"
            outdir.mkdir()
            if duration is None:
                duration = _one_run(ledger, outdir, phase)
        rounds += 1
        active = {}
        for slot in range(concurrent):
            phase[slot] = 0
            p = ctx.Process(target=kill_worker, args=(ledger, str(outdir), phase, slot, rng.randrange(2 ** 31)))
            p.start()
            target = rng.randint(1, 4)
            active[slot] = [p, target, rng.uniform(0, duration if target == 1 else 0.03), None]
        for where, died in _kill_all(active, phase):
            tries += 1
            if died:
                killed += 1
                landed[where] = landed.get(where, 0) + 1
    return {"killed": killed, "tries": tries, "ledgers": -(-rounds // per_ledger), "phases": landed,
            "run_seconds": duration, "seconds": time.perf_counter() - t0}


def _kill_all(active: dict, phase):
    """Kill each child once armed (it reached its phase, or ended) and its delay has passed:
    ``(phase at the kill, whether SIGKILL ended it)`` for each."""
    while active:
        now = time.perf_counter()
        for slot in list(active):
            p, target, delay, armed = active[slot]
            if armed is None and (phase[slot] >= target or not p.is_alive()):
                active[slot][3] = armed = now + delay
            if armed is not None and now >= armed:
                where = PHASES[phase[slot]]
                p.kill()   # SIGKILL, unless it has ended and is_alive() reaped it (os.kill would race)
                p.join()
                del active[slot]
                yield where, p.exitcode == -signal.SIGKILL
        time.sleep(0.001)


def _one_run(ledger, outdir, phase) -> float:
    """A whole run in this process, not killed: it warms what the forked children inherit (the
    imports, the mechanism's profile) and times a run (to spread the kills over it)."""
    kill_worker(ledger, str(outdir), phase, 0, 0)
    t0 = time.perf_counter()
    kill_worker(ledger, str(outdir), phase, 0, 0)
    return time.perf_counter() - t0


def check_after_kills(directory: str | os.PathLike) -> dict:
    """What must hold after the kills, in every ledger of ``directory``: ``verify`` accepts it
    (raises otherwise); every output names a recorded run; every delivered run has its output."""
    from optnoise.publish.ledger import Ledger
    out = {"ledgers": 0, "runs": 0, "delivered": 0, "reserved": 0, "outputs": 0, "outputs_without_spend": [],
           "delivered_without_output": []}
    for path in sorted(Path(directory).glob("ledger-*.db")):
        ledger = Ledger(path, write=False)
        report = ledger.verify()
        runs = {r["run_id"]: r for r in ledger.runs()}
        outputs = {f.stem for f in (path.parent / path.stem.replace("ledger", "out")).glob("*.json")}
        out["ledgers"] += 1
        out["runs"] += len(runs)
        out["delivered"] += report["delivered"]
        out["reserved"] += report["reserved"]
        out["outputs"] += len(outputs)
        out["outputs_without_spend"] += sorted(outputs - set(runs))
        out["delivered_without_output"] += sorted(k for k, r in runs.items() if r["state"] == "delivered"
                                                  and k not in outputs)
    return out


def overhead(directory: str | os.PathLike, sizes: tuple[int, ...] = (1, 10, 30), repeats: int = 3) -> list[dict]:
    """What the ledger adds to composing a lifetime total: ``reserve`` (open, ``BEGIN
    IMMEDIATE``, read and parse every stored spend, compose, insert, commit with
    ``synchronous = FULL``) against :func:`~optnoise.publish.spend.lifetime_total` of the same
    parts in memory (the same profiles, cached), side by side at each number of stored runs."""
    from optnoise.publish.ledger import Ledger
    from optnoise.publish.spend import StoredPart, exact_profile_of, lifetime_total, stored
    spend, rows = _spend(), []
    digest = stored(spend.parts[0])[0].mechanism_sha256
    profiles = {digest: exact_profile_of(spend.parts[0].mechanism)}
    ledger = new_ledger(Path(directory) / "overhead.db", 1e6)
    for n in sizes:
        while len(ledger.runs()) < n - 1:
            ledger.reserve(spend)
        ledger = Ledger(ledger.path)   # a run opens the file afresh (its profiles are rebuilt once)
        ledger.reserve(spend)
        on_disk, in_memory = [], []
        for _ in range(repeats):
            parts = [StoredPart.from_json(p) for r in ledger.runs() for p in r["parts"]]
            t0 = time.perf_counter()
            lifetime_total(parts + parts[-1:], profiles, ledger.budget)
            in_memory.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ledger.reserve(spend)
            on_disk.append(time.perf_counter() - t0)
        rows.append({"stored_runs": n, "reserve_s": min(on_disk), "in_memory_s": min(in_memory),
                     "ratio": min(on_disk) / min(in_memory)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--admits", type=int, default=5)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--concurrent", type=int, default=8)
    ap.add_argument("--per-ledger", type=int, default=4, help="rounds of kills on one ledger")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp(prefix="ledger-stress-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {os.getloadavg()}")
    r = race(base / "race.db", args.processes, args.admits)
    print(f"race: {args.processes} processes, budget admitting {args.admits}: {len(r['recorded'])} recorded, "
          f"{len(r['refused'])} refused, exit codes {sorted(set(r['exit_codes']))}, {r['seconds']:.1f} s")
    assert len(r["recorded"]) == args.admits and len(r["refused"]) == args.processes - args.admits
    (base / "kill").mkdir()
    k = kill(base / "kill", args.kills, concurrent=args.concurrent, per_ledger=args.per_ledger, seed=args.seed)
    t0 = time.perf_counter()
    c = check_after_kills(base / "kill")
    print(f"kill: {k['killed']} SIGKILLs in {k['tries']} tries on {k['ledgers']} ledger(s) ({k['seconds']:.1f} s; "
          f"a run takes {k['run_seconds']:.2f} s), landed in {k['phases']}")
    print(f"after: {c['runs']} runs recorded ({c['delivered']} delivered, {c['reserved']} reserved), "
          f"{c['outputs']} outputs; outputs without a recorded spend {len(c['outputs_without_spend'])}, delivered "
          f"runs without output {len(c['delivered_without_output'])}; verify accepted ({time.perf_counter() - t0:.1f} s)")
    assert not c["outputs_without_spend"] and not c["delivered_without_output"]
    for row in overhead(base):
        print(f"overhead at {row['stored_runs']} stored runs: reserve {row['reserve_s']:.3f} s, the same total in "
              f"memory {row['in_memory_s']:.3f} s, ratio {row['ratio']:.2f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
