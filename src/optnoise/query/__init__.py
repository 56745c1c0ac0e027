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


class _Door(types.ModuleType):
    """The package's module type: calling the package is calling :func:`query`. The release
    and :func:`compare` (design, certificates: scipy, mpmath) are imported on first use, so
    that a Spark worker unpickling :mod:`.spark`'s per-partition function imports only the
    aggregation. ``compare`` stays the function when its module is imported (as an eager
    ``from .compare import compare`` would leave it)."""

    def __call__(self, frame: Any, spec: Any, **options: Any) -> dict:
        from .release import query
        return query(frame, spec, **options)

    def __getattr__(self, name: str) -> Any:
        if name == "query":
            from .release import query as found
        elif name == "compare":
            from .compare import compare as found
        else:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        super().__setattr__(name, found)
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("compare", "query") and isinstance(value, types.ModuleType):
            return   # the import system binding the submodule: the function keeps the name
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Door

__all__ = ["compare", "query"]
