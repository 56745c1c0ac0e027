"""The document of a publication: its header, its provenance, the input it describes, the
statement in words, and what a seeded (not private) document withholds.

Both publishers -- a release's manifest (:mod:`optnoise.table.manifest`) and a query's
document (:mod:`optnoise.query.release`) -- write ``tool``, ``version`` and ``created``
first (:func:`header`), the randomness, ``private`` and the engine (:func:`provenance`),
and the input as ``{path, format, sha256, rows, ...}`` (:func:`describe_input`). The
statement of the unit's total in words is one builder (:func:`statement`) whose sentences
are each publisher's (:class:`Wording`); numbers are rounded *up* (:func:`round_up`), so the
words never claim more than the document's numbers.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from ..seeded import withhold

if TYPE_CHECKING:
    from ..randomness import RandomSource

#: The false-positive rate the words of a unit's total use (one of the readout's FPRs:
#: :meth:`~optnoise.analysis.tradeoff.AttackReadout.to_json` words it at 0.05).
WORDS_FPR = 0.05

#: Where every document states a guarantee (moved under ``only_if_unseeded`` when seeded).
CLAIMS: tuple[tuple[str, ...], ...] = (("total",),)
#: Where every document states a protection in words (replaced by the not-private sentence).
SENTENCES: tuple[tuple[str, ...], ...] = (("unit", "protects"), ("statement",))


def header() -> dict[str, Any]:
    """``tool``, ``version`` (:mod:`optnoise.version`) and ``created`` (UTC, to the second)."""
    from ..version import __version__
    return {"tool": "optnoise", "version": __version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


def provenance(source: "RandomSource", engine: str) -> dict[str, Any]:
    """``randomness`` (its source, whether private), ``private`` and ``engine``."""
    return {"randomness": {"source": source.description, "private": bool(source.private)},
            "private": bool(source.private), "engine": engine}


def describe_input(info: dict | None, rows: int, **more: Any) -> dict[str, Any]:
    """The input as a document describes it: ``info`` (``path``, ``format``, ``sha256`` of a
    file; nothing for a frame), then ``rows`` and ``more``."""
    return {**(info or {}), "rows": int(rows), **more}


def input_info(path: Any, fmt: str, sha256: str | None = None) -> dict[str, Any]:
    """``{path, format, sha256}`` of an input file (``sha256`` when already taken)."""
    from .files import file_sha256
    return {"path": str(path), "format": fmt, "sha256": sha256 if sha256 is not None else file_sha256(path)}


# ------------------------------------------------------------------ the two artifacts
#: What the private audit record is, in its own words (and the publishable document's).
AUDIT_NOTE = ("private audit record: diagnostics of the input computed without noise (the bounding counts, the "
              "input's SHA-256 and rows, warnings): NOT protected by any certificate -- keep it, never publish it")
#: Where the publishable document says the audit record exists.
AUDIT_POINTER = ("diagnostics of the input without noise (bounding counts, the input's hash and rows) are not in this "
                 "document: they are in the private audit record (--audit), which must not be published")


def split_audit(doc: dict, private: Iterable[tuple[str, ...]], warnings: Iterable[str] = ()) -> tuple[dict, dict]:
    """The two artifacts of one publication (issue 34): the *publishable* document -- every
    field a released (noised) value, derived from released values, or public -- and the
    *private audit record*, which holds the values at ``private`` (paths into ``doc``: what
    depends on the data without noise), moved out at the same paths, and ``warnings``.

    Why the document may be published: what is moved out is all it held of the data but for
    the released values; what stays is the spec, the public unit (the number of units only
    under ``replace``, where it is public), the mechanisms and their certificates (functions
    of the spec and of public numbers), and post-processing of the released values."""
    from ..seeded import UNSEEDED_KEY
    out = withhold({k: v for k, v in doc.items() if k != UNSEEDED_KEY}, private)   # moved out, same paths
    held = out.pop(UNSEEDED_KEY)
    held.pop("note", None)
    if UNSEEDED_KEY in doc:   # a seeded document's withheld claims stay where they are
        out[UNSEEDED_KEY] = doc[UNSEEDED_KEY]
    out["audit"] = AUDIT_POINTER
    audit = {"format": "optnoise.audit", "format_version": 1, "private": True, "note": AUDIT_NOTE,
             **{k: doc[k] for k in ("tool", "version", "created", "engine") if k in doc},
             "warnings": list(warnings), **held}
    return out, audit


# ------------------------------------------------------------------ seeded
def seeded_document(doc: dict, parts: str, part_claims: Iterable[tuple[str, ...]],
                    part_sentences: Iterable[tuple[str, ...]] = (), claims: Iterable[tuple[str, ...]] = ()) -> dict:
    """The document of a seeded (not private) publication (:func:`optnoise.seeded.withhold`):
    the total, the document's own ``claims`` and every part's (``doc[parts][NAME]`` at
    ``part_claims``) moved under ``only_if_unseeded`` (same paths), and every sentence of
    protection (``unit.protects``, ``statement``, the parts' ``part_sentences``) replaced by
    "not private: anyone who knows or guesses the seed can remove the noise"."""
    names = list(doc.get(parts, {}))
    part_claims, part_sentences = list(part_claims), list(part_sentences)
    held = list(CLAIMS) + list(claims) + [(parts, n, *path) for n in names for path in part_claims]
    sentences = list(SENTENCES) + [(parts, n, *path) for n in names for path in part_sentences]
    return withhold(doc, held, replace=sentences)


# ------------------------------------------------------------------ the statement
@dataclass(frozen=True)
class Wording:
    """A publisher's sentences of its total (``str.format`` templates): ``pure`` when the
    total's basic delta is 0, else ``approximate``; ``tight`` appended when the PLD epsilon is
    below the basic one. Fields: ``{who}``, ``{eps}``, ``{delta}`` (rounded up) and
    ``{factor}`` (``e^eps = ...``, :func:`factor`)."""

    pure: str
    approximate: str
    tight: str


def statement(total: dict, who: str, wording: Wording) -> str:
    """A unit's total guarantee in plain words: ``who`` is protected as ``wording`` says,
    then the total's attack terms.

    Numbers are rounded *up* (:func:`round_up`), so the words never claim more than the
    document's numbers; ``e^eps`` is never overflowed (:func:`factor`). With ``delta > 0``
    the sentence is the (eps, delta)-DP inequality itself, not "a factor e^eps except with
    probability delta" -- that would be the stronger probabilistic DP, which ``delta_dp``
    does not give. (A seeded document states no protection: its publisher says
    :data:`~optnoise.seeded.NOT_PRIVATE` instead, :func:`seeded_document`.)
    """
    b, p = total["basic"], total["pld"]
    eps, delta = round_up(b["epsilon"]), round_up(b["delta"], 3)
    template = wording.pure if not b["delta"] else wording.approximate
    text = template.format(who=who, eps=eps, delta=delta, factor=factor(eps))
    if p["epsilon"] is not None and p["epsilon"] < b["epsilon"] * (1 - 1e-3):
        text += wording.tight.format(eps=round_up(p["epsilon"]), delta=round_up(p["delta"], 3))
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


def round_up(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, rounded towards +infinity (``2.50049`` -> ``2.501``)."""
    from decimal import ROUND_CEILING, Decimal
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    d = Decimal(repr(float(x)))
    step = Decimal(1).scaleb(d.adjusted() - (digits - 1))
    r = (d / step).to_integral_value(rounding=ROUND_CEILING) * step
    return f"{float(r):.{digits}g}"


__all__ = ["AUDIT_NOTE", "AUDIT_POINTER", "split_audit", "CLAIMS", "SENTENCES", "WORDS_FPR", "Wording", "describe_input", "factor", "header", "input_info",
           "provenance", "round_up", "seeded_document", "statement"]
