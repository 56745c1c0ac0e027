"""The publishable document holds only released values, what is derived from them, and public
values (issue 34, item 1): for two neighbouring tables -- one unit's rows replaced -- and the
same seed, the two documents differ only in the released values and what is computed from them
(intervals); everything that depends on the data without noise is in the private audit record.

A property test over random tables (hypothesis, derandomized in the suite: the same examples on
every run). It fails on a document that still holds the bounding counts, the input's rows or
any other unnoised function of the data."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise.query import query

warnings.filterwarnings("ignore", message=".*not private.*")

SPEC = {"unit": {"id": "u", "max_rows": 2}, "statistics": {
    "evening": {"kind": "count", "where": {"h": {"lower": 3}}, "epsilon": 1.0},
    "by_hour": {"kind": "histogram", "key": "h", "keys": {"lower": 0, "upper": 5}, "epsilon": 1.0},
    "kwh": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "epsilon": 1.0},
    "mean": {"kind": "mean", "column": "v", "clamp": {"lower": 0, "upper": 2}, "epsilon": 1.0},
    "peak": {"kind": "peak", "key": "h", "keys": {"lower": 0, "upper": 5}, "of": "v", "clamp": {"lower": 0, "upper": 2},
             "epsilon": 1.0}}}
#: Keys whose values are released, or computed from released values and public mechanisms.
RELEASED = {"value", "values", "interval", "intervals"}

rows = st.lists(st.tuples(st.integers(-1, 7), st.integers(0, 3)), min_size=1, max_size=4)   # (hour, kwh)


def _publishable(doc: dict) -> dict:
    """The document less the released values and the time it was made."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in RELEASED and k != "created"}
        return x
    return strip(doc)


def _table(units: list[list[tuple[int, int]]]) -> pd.DataFrame:
    return pd.DataFrame([{"u": i, "h": h, "v": v} for i, unit in enumerate(units) for h, v in unit])


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(st.lists(rows, min_size=4, max_size=4), rows)   # four units: the same public domains, designed quickly
def test_neighbouring_tables_give_documents_that_differ_only_in_released_values(units, other):
    a, b = _table(units), _table([other] + units[1:])   # unit 0's rows replaced
    da, audit_a = query(a, SPEC, seed=3, with_audit=True)
    db, audit_b = query(b, SPEC, seed=3, with_audit=True)
    assert _publishable(da) == _publishable(db)
    assert "bounding" not in da and all("bounding" not in s for s in da["statistics"].values())
    assert "rows" not in da["input"] and "audit" in da
    assert audit_a["private"] is True and "bounding" in audit_a and audit_a["input"]["rows"] == len(a)


def test_the_audit_record_holds_what_the_document_left_out():
    """Power check: the same comparison on the whole (unsplit) record fails -- the bounding
    counts of the two tables differ -- so the property above is not vacuous."""
    a = _table([[(4, 1), (4, 2), (1, 0)], [(2, 3)], [(5, 4)]])
    b = _table([[(0, 0)], [(2, 3)], [(5, 4)]])
    (da, audit_a), (db, audit_b) = (query(t, SPEC, seed=3, with_audit=True) for t in (a, b))
    assert _publishable(da) == _publishable(db)
    assert audit_a["bounding"] != audit_b["bounding"] or audit_a["statistics"] != audit_b["statistics"]
    assert np.isfinite(da["statistics"]["mean"]["value"])
