"""The manifest written beside every release: what was released, under which unit, how,
each column's exact certificate and the record's total (JSON keys: docs/release.md)."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from ..randomness import RandomSource
from .plan import ColumnPlan

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
    from .. import __version__
    columns = {p.name: p.to_json() for p in plans}
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
    return out


def words(manifest: dict) -> str:
    """The record's total guarantee in plain words (for the command line and the demo)."""
    total = manifest["total"]
    b, p = total["basic"], total["pld"]
    cols = ", ".join(manifest["columns"])
    if manifest["unit"]["kind"] == "record":
        who = f"each record is protected as a whole: changing all its privatized values ({cols}) to any others"
    else:
        who = (f"each record is protected only against changes of its values ({cols}) within each column's "
               "distances: such changes")
    eps, delta = b["epsilon"], b["delta"]
    how = f"{'pure ' if not delta else ''}{eps:.4g}-DP{f' with delta {delta:.3g}' if delta else ''}, adding the columns'"
    text = (f"{who} changes the probability of any released row by at most a factor e^{eps:.4g} = {math.exp(eps):.4g}"
            f"{f' (except with probability {delta:.3g})' if delta else ''} ({how} guarantees)")
    if p["epsilon"] is not None and p["epsilon"] < eps * (1 - 1e-3):
        text += f"; composed tightly (privacy loss distributions): {p['epsilon']:.4g}-DP with delta {p['delta']:g}"
    return text
