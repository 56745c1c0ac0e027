"""The manifest written beside every release: what was released, under which unit, how,
each column's exact certificate and the record's total (JSON keys: docs/release.md).

The header, the provenance, the statement's builder and the seeded withholding are the
publishing core's (:mod:`optnoise.publish.document`); the words of each unit are
:data:`optnoise.publish.unit.RELEASE_UNITS`'s; the total is the record's accountant's
(:data:`optnoise.table.plan.ACCOUNTANT`).
"""

from __future__ import annotations

from typing import Any

from ..publish.accountant import Subject
from ..publish.document import (
    WORDS_FPR,
    Wording,
    describe_input,
    factor,
    header,
    provenance,
    round_up,
    seeded_document,
)
from ..publish.document import statement as document_statement
from ..publish.unit import RELEASE_UNITS
from ..randomness import RandomSource
from ..seeded import NOT_PRIVATE
from .plan import ACCOUNTANT, ColumnPlan, record_parts

#: How a release states the record's total in words (:func:`optnoise.publish.document.statement`).
WORDING = Wording(
    pure="{who} the probability of any set of released rows by at most a factor {factor} (pure {eps}-DP, adding "
         "the columns' guarantees)",
    approximate="{who} the probability of any set of released rows to at most {factor} times it plus {delta} "
                "({eps}-DP with delta {delta}, adding the columns' guarantees; the factor itself may be exceeded, "
                "by at most that much probability in all)",
    tight="; composed tightly (privacy loss distributions): {eps}-DP with delta {delta}")


def build_manifest(*, unit: str, plans: list[ColumnPlan], total: dict, keep: tuple[str, ...], rows: int,
                   source: RandomSource, engine: str, input_info: dict | None = None,
                   output_info: dict | None = None, spec_file: dict | None = None) -> dict:
    """The manifest object.

    With exactly one privatized column it also carries the single-column keys of the
    first manifests (``input.column``, ``output.column``, ``domain``, ``mechanism``,
    ``certificate``), unchanged in meaning: the contract adds keys and renames none.
    """
    columns = {p.name: p.to_json() for p in plans}
    if "attack" not in total:   # an attack budget computed it
        total = ACCOUNTANT.with_attack(total, record_parts(plans), record_subject(plans))
    names = [p.name for p in plans]
    prov = provenance(source, engine)
    out: dict[str, Any] = {
        **header(),
        "unit": RELEASE_UNITS[unit].to_json(),
        "input": describe_input(input_info, rows, columns=names),
        "output": dict(output_info or {}),
        "kept": {"columns": list(keep), "protected": False,
                 "note": "copied unchanged: not protected by any certificate" if keep else "no column copied"},
        "columns": columns,
        "total": total,
        **prov,
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


#: Where a manifest states a guarantee besides ``total``: moved under ``only_if_unseeded`` when seeded.
CLAIMS: tuple[tuple[str, ...], ...] = (("certificate",), ("mechanism", "quantized", "certificate"))
#: The same, per column (``columns.NAME....``).
COLUMN_CLAIMS: tuple[tuple[str, ...], ...] = (("certificate",), ("noise_certificate",),
                                              ("mechanism", "quantized", "certificate"))
#: Where a column states a protection in words: replaced by the not-private sentence when seeded.
COLUMN_SENTENCES: tuple[tuple[str, ...], ...] = (("protects",),)


def seeded_manifest(manifest: dict) -> dict:
    """The manifest of a seeded release (:func:`optnoise.publish.document.seeded_document`):
    every certificate and the total moved under ``only_if_unseeded`` (same paths), every
    sentence of protection replaced by "not private: anyone who knows or guesses the seed
    can remove the noise"."""
    return seeded_document(manifest, "columns", COLUMN_CLAIMS, COLUMN_SENTENCES, claims=CLAIMS)


def words(manifest: dict) -> str:
    """The record's total guarantee in plain words (for the command line and the demo): the
    manifest's ``statement``, computed when the manifest was built (before the release was
    moved into place), or :func:`statement` for a manifest without one."""
    return manifest["statement"] if "statement" in manifest else statement(manifest)


def statement(manifest: dict) -> str:
    """The record's total guarantee in plain words (:func:`optnoise.publish.document.statement`
    with :data:`WORDING`): the record as a whole, or its values within each column's distances
    under the value unit. A seeded (not private) release states no protection."""
    if manifest.get("private") is False or "total" not in manifest:
        return NOT_PRIVATE
    cols = ", ".join(manifest["columns"])
    if manifest["unit"]["kind"] == "record":
        who = (f"each record is protected as a whole: changing all its privatized values ({cols}) to any others "
               "changes")
    else:
        who = (f"each record is protected only against changes of its values ({cols}) within each column's "
               "distances: such changes change")
    return document_statement(manifest["total"], who, WORDING)


def record_subject(plans: list[ColumnPlan]) -> Subject:
    """Who the record's attack readout is about, in words, given the pair it names
    (:func:`attack_subject`)."""
    return lambda worst: attack_subject(plans, worst)


def attack_subject(plans: list[ColumnPlan], worst: str) -> dict:
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


__all__ = ["CLAIMS", "COLUMN_CLAIMS", "COLUMN_SENTENCES", "WORDING", "WORDS_FPR", "attack_subject", "build_manifest",
           "factor", "record_subject", "round_up", "seeded_manifest", "statement", "words"]
