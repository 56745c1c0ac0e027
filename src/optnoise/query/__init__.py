"""Statistics of a table -- counts, histograms, sums, peaks, modes -- with optimal, certified
noise, per person (the privacy unit), under one budget (docs/statistics.md).

:func:`query` takes a pandas DataFrame and a spec (the TOML structure as a dict) and returns
the document (docs/statistics.md: ``unit``, ``private``, ``statistics.NAME``, ``total``);
:func:`~optnoise.query.files.query_file` does the same for a CSV or Parquet file, streamed. The package itself is callable, so ``optnoise.query(frame, spec)`` is
:func:`query` while ``optnoise.query.spec`` and the other modules stay importable (as
``optnoise.design``). Modules, in the order data flows: :mod:`.spec`, :mod:`.aggregate`,
:mod:`.neighbourhood`, :mod:`.mechanisms`, :mod:`.noisy_max`, :mod:`.intervals`,
:mod:`.release`, :mod:`.files`; :func:`compare` (module :mod:`.compare`) shows both methods of
each peak and mode of a spec on synthetic data of its shape (it never reads data).
"""

import sys
import types
from typing import Any

from .compare import compare
from .release import query


class _Door(types.ModuleType):
    """The package's module type: calling the package is calling :func:`query`."""

    def __call__(self, frame: Any, spec: Any, **options: Any) -> dict:
        return query(frame, spec, **options)


sys.modules[__name__].__class__ = _Door

__all__ = ["compare", "query"]
