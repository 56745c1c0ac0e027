"""The manifest written beside every release: what was released, under which unit, how,
each column's exact certificate and the record's total (JSON keys: docs/release.md)."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from ..randomness import RandomSource
from ..seeded import NOT_PRIVATE, withhold
from .plan import ColumnPlan, composition_items, released_profile

#: The false-positive rate the words of the record's total use (one of the readout's FPRs:
#: :meth:`~optnoise.analysis.tradeoff.AttackReadout.to_json` words it at 0.05).
WORDS_FPR = 0.05

#: What each unit protects, in words (manifest ``unit``).
UNIT_WORDS = {
    "record": {
        "protects": "one record (row): every privatized value of the record may change to any other value of its "
                    "column's domain; 'total' is the guarantee for the whole record, 'columns.NAME.certificate' for "
                    "one column alone",
        "not_protected": "kept columns (copied unchanged); the number of rows and their order",
    },
    "value": {
        "protects": "changes of a value by the distances of its column's neighbourhood only (the papers' model, "
                    "e.g. a peak hour moving by one hour); 'total' is the guarantee when each privatized value of one "
                    "record changes within its neighbourhood",
        "not_protected": "a record whose value changes by more than its column's distances (for example to any "
                         "other value of the domain); kept columns; the number of rows and their order",
    },
}


def build_manifest(*, unit: str, plans: list[ColumnPlan], total: dict, keep: tuple[str, ...], rows: int,
                   source: RandomSource, engine: str, input_info: dict | None = None,
                   output_info: dict | None = None, spec_file: dict | None = None) -> dict:
    """The manifest object.

    With exactly one privatized column it also carries the single-column keys of the
    first manifests (``input.column``, ``output.column``, ``domain``, ``mechanism``,
    ``certificate``), unchanged in meaning: the contract adds keys and renames none.
    """
    from ..version import __version__
    columns = {p.name: p.to_json() for p in plans}
    total = {**total, "attack": total.get("attack") or record_attack(plans)}   # an attack budget computed it
    names = [p.name for p in plans]
    out: dict[str, Any] = {
        "tool": "optnoise", "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "unit": {"kind": unit, **UNIT_WORDS[unit]},
        "input": {**(input_info or {}), "rows": int(rows), "columns": names},
        "output": dict(output_info or {}),
        "kept": {"columns": list(keep), "protected": False,
                 "note": "copied unchanged: not protected by any certificate" if keep else "no column copied"},
        "columns": columns,
        "total": total,
        "randomness": {"source": source.description, "private": bool(source.private)},
        "private": bool(source.private),
        "engine": engine,
    }
    if spec_file is not None:
        out["spec"] = spec_file
    if len(plans) == 1:
        only = columns[names[0]]
        out["input"]["column"] = names[0]
        if output_info is not None:
            out["output"]["column"] = names[0]
        out["domain"] = only["domain"]
        out["mechanism"] = only["mechanism"]
        out["certificate"] = only["certificate"]
    out["statement"] = statement(out)
    return out if source.private else seeded_manifest(out)


#: Where a manifest states a guarantee: moved under ``only_if_unseeded`` when seeded.
CLAIMS: tuple[tuple[str, ...], ...] = (("total",), ("certificate",), ("mechanism", "quantized", "certificate"))
#: Where a manifest states a protection in words: replaced by the not-private sentence when seeded.
SENTENCES: tuple[tuple[str, ...], ...] = (("unit", "protects"), ("statement",))
#: The same, per column (``columns.NAME....``).
COLUMN_CLAIMS: tuple[tuple[str, ...], ...] = (("certificate",), ("noise_certificate",),
                                              ("mechanism", "quantized", "certificate"))
COLUMN_SENTENCES: tuple[tuple[str, ...], ...] = (("protects",),)


def seeded_manifest(manifest: dict) -> dict:
    """The manifest of a seeded release (:mod:`optnoise.seeded`): every certificate and the
    total moved under ``only_if_unseeded`` (same paths), every sentence of protection
    replaced by "not private: anyone who knows or guesses the seed can remove the noise"."""
    names = list(manifest.get("columns", {}))
    claims = list(CLAIMS) + [("columns", n, *path) for n in names for path in COLUMN_CLAIMS]
    sentences = list(SENTENCES) + [("columns", n, *path) for n in names for path in COLUMN_SENTENCES]
    return withhold(manifest, claims, replace=sentences)


def words(manifest: dict) -> str:
    """The record's total guarantee in plain words (for the command line and the demo): the
    manifest's ``statement``, computed when the manifest was built (before the release was
    moved into place), or :func:`statement` for a manifest without one."""
    return manifest["statement"] if "statement" in manifest else statement(manifest)


def statement(manifest: dict) -> str:
    """The record's total guarantee in plain words.

    Numbers are rounded *up* (:func:`round_up`), so the words never claim more than the
    manifest's numbers; ``e^eps`` is never overflowed (:func:`factor`). With ``delta > 0``
    the sentence is the (eps, delta)-DP inequality itself, not "a factor e^eps except with
    probability delta" -- that would be the stronger probabilistic DP, which the columns'
    ``delta_dp`` does not give. A seeded (not private) release states no protection.
    """
    if manifest.get("private") is False or "total" not in manifest:
        return NOT_PRIVATE
    total = manifest["total"]
    b, p = total["basic"], total["pld"]
    cols = ", ".join(manifest["columns"])
    if manifest["unit"]["kind"] == "record":
        who = (f"each record is protected as a whole: changing all its privatized values ({cols}) to any others "
               "changes")
    else:
        who = (f"each record is protected only against changes of its values ({cols}) within each column's "
               "distances: such changes change")
    eps, delta = round_up(b["epsilon"]), round_up(b["delta"], 3)
    if not b["delta"]:
        text = (f"{who} the probability of any set of released rows by at most a factor {factor(eps)} "
                f"(pure {eps}-DP, adding the columns' guarantees)")
    else:
        text = (f"{who} the probability of any set of released rows to at most {factor(eps)} times it plus "
                f"{delta} ({eps}-DP with delta {delta}, adding the columns' guarantees; the factor itself may be "
                "exceeded, by at most that much probability in all)")
    if p["epsilon"] is not None and p["epsilon"] < b["epsilon"] * (1 - 1e-3):
        text += (f"; composed tightly (privacy loss distributions): {round_up(p['epsilon'])}-DP with delta "
                 f"{round_up(p['delta'], 3)}")
    if "attack" in total:
        text += f". In attack terms: {total['attack']['in_words']}"
    return text


def factor(eps: str) -> str:
    """``e^eps`` in words, rounded up, for an epsilon already written (``"2"`` -> ``"e^2 = 7.39"``);
    beyond the float range ``"e^710 > 1e308"``."""
    try:
        value = math.exp(float(eps))
    except OverflowError:
        return f"e^{eps} > 1e308"
    return f"e^{eps} = {round_up(value)}" if math.isfinite(value) else f"e^{eps} > 1e308"


def record_attack(plans: list[ColumnPlan], fpr: float = WORDS_FPR) -> dict:
    """The record's total in attack terms (manifest ``total.attack``): the best attacker
    against all its privatized columns at once -- the exact trade-off curve of the columns'
    *quantized* mechanisms under the unit, composed over every combination of their
    neighbouring pairs (:func:`optnoise.analysis.tradeoff.compose_tradeoff`; ``method`` says
    whether exactly or from the dominating lower bound), and the sentence that says it."""
    from ..analysis.tradeoff import DEFAULT_FPRS
    from ..analysis.tradeoff_composition import compose_tradeoff
    items, mixed = composition_items(plans, released_profile)   # once per distinct mechanism
    readout = compose_tradeoff(items, mixed=mixed).readout(sorted({*DEFAULT_FPRS, fpr}))
    return readout.to_json(**_attack_subject(plans, readout.worst_pair.get(f"tpr_at_fpr {fpr:g}", "")))


def _attack_subject(plans: list[ColumnPlan], worst: str) -> dict:
    """Who is attacked, in words: one column with the values of its worst pair, or the record."""
    if len(plans) > 1:
        names = ", ".join(p.name for p in plans)
        return {"subject": f"a record's values ({names})", "verb": "were",
                "qualifier": ", for any two sets of values A and B"}
    plan = plans[0]
    d = plan.domain
    subject = f"a record's {plan.name}"
    try:
        if worst.startswith("mu=") and d.lower is not None:
            mu = int(worst[3:])
            if d.cyclic or plan.mechanism.kind == "cyclic":
                x, x2 = d.lower + mu % d.size, d.lower  # type: ignore[operator]
            else:
                x, x2 = (d.lower + mu, d.lower) if mu > 0 else (d.lower, d.lower - mu)
            return {"subject": subject, "value": str(x), "other": str(x2)}
        if worst.startswith("x=") and d.categories is not None:
            a, b = (int(v.split("=")[1]) for v in worst.split(","))
            return {"subject": subject, "value": repr(d.categories[a]), "other": repr(d.categories[b])}
    except (ValueError, IndexError, TypeError):
        pass
    return {"subject": subject, "qualifier": ", for any two values A and B"}


def round_up(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, rounded towards +infinity (``2.50049`` -> ``2.501``)."""
    from decimal import ROUND_CEILING, Decimal
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    d = Decimal(repr(float(x)))
    step = Decimal(1).scaleb(d.adjusted() - (digits - 1))
    r = (d / step).to_integral_value(rounding=ROUND_CEILING) * step
    return f"{float(r):.{digits}g}"
