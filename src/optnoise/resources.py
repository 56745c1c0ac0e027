"""Memory estimates and guards: refuse, before allocating, what would not fit.

A computation whose size follows from its arguments (an LP over ``N`` noise values and
``K`` distances, a window of ``W`` masses, ``k`` compositions, ``count`` draws) is
*estimated* from those arguments first; when the estimate exceeds the limit the library
raises :class:`~optnoise.errors.ResourceLimitError` (an ``InvalidParameterError``:
the command line exits 2 naming the flag, the estimate and the limit) instead of being
killed by the operating system or hanging half-way.

The limit is passed explicitly: every guarded function takes ``max_memory`` (bytes;
``None`` means :func:`default_limit`). Nothing here keeps state.

* :func:`default_limit` -- half of the machine's physical memory (``os.sysconf``), or
  less when the process runs under a smaller address-space limit (``RLIMIT_AS``);
* :func:`check` -- the guard: ``check(estimate, parameter=..., value=..., what=...,
  max_memory=...)``;
* estimators (``*_bytes``) -- pure functions of sizes, calibrated on this code base
  (peak resident memory over the interpreter's baseline, measured with
  ``/usr/bin/time -f %M``; they over-estimate rather than under-estimate).

>>> parse_memory("1.5G"), parse_memory("512M"), parse_memory("4096")
(1610612736, 536870912, 4096)
>>> format_bytes(3 * 2**30)
'3 GiB'
"""

from __future__ import annotations

import math
import os
import re

from .errors import InvalidParameterError, ResourceLimitError

#: Fraction of physical memory a single computation may plan to use by default.
DEFAULT_FRACTION = 0.5
#: Limit used where the platform does not report its memory (4 GiB).
FALLBACK_LIMIT = 4 * 2**30

_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20,
          "G": 2**30, "GB": 2**30, "GIB": 2**30, "T": 2**40, "TB": 2**40, "TIB": 2**40}


def physical_memory() -> int | None:
    """Bytes of physical memory (``os.sysconf``), or ``None`` where unknown."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return int(pages) * int(size) if pages > 0 and size > 0 else None


def _address_space_headroom() -> int | None:
    """Bytes left under ``RLIMIT_AS`` (the current address space subtracted), or ``None``."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError):
        return None
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    used = 0
    try:
        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return max(int(soft) - used, 0)


def default_limit() -> int:
    """The default ``max_memory``: ``DEFAULT_FRACTION`` of physical memory, and at most
    ``DEFAULT_FRACTION`` of what is left under an address-space limit (``RLIMIT_AS``)."""
    phys = physical_memory()
    limit = int(phys * DEFAULT_FRACTION) if phys else FALLBACK_LIMIT
    room = _address_space_headroom()
    if room is not None:
        limit = min(limit, int(room * DEFAULT_FRACTION))
    return limit


def resolve_limit(max_memory: int | None) -> int:
    """``max_memory`` itself, or :func:`default_limit` for ``None``."""
    return default_limit() if max_memory is None else int(max_memory)


def parse_memory(text: str | int, *, parameter: str = "max_memory") -> int:
    """Bytes of ``"8G"``, ``"512M"``, ``"1.5GiB"``, ``"4096"`` (binary units; K, M, G, T)."""
    accepted = "a size like 512M, 8G or 1.5T (bytes without a unit), > 0"
    if isinstance(text, bool):
        raise InvalidParameterError(parameter, text, accepted)
    if isinstance(text, int):
        if text <= 0:
            raise InvalidParameterError(parameter, text, accepted)
        return text
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]{1,3}))?\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(3).upper() not in _UNITS:
        raise InvalidParameterError(parameter, text, accepted)
    value = float(m.group(1) + (f"e{m.group(2)}" if m.group(2) else "")) * _UNITS[m.group(3).upper()]
    if not (math.isfinite(value) and value >= 1):
        raise InvalidParameterError(parameter, text, accepted)
    return int(value)


def format_bytes(n: float) -> str:
    """``3221225472`` -> ``'3 GiB'`` (three significant digits)."""
    if not math.isfinite(n):
        return "unbounded"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def check(estimate: float, *, parameter: str, value: object, what: str, max_memory: int | None = None) -> None:
    """Raise :class:`ResourceLimitError` when ``estimate`` bytes exceed the limit.

    Parameters
    ----------
    estimate:
        Planned bytes (from an estimator below); may be ``inf``.
    parameter, value:
        The Python parameter whose value makes the computation this large, and the value.
    what:
        The computation, in words (``"the LP over 1000001 noise values x 2 distances"``).
    max_memory:
        The limit in bytes; ``None`` for :func:`default_limit`.
    """
    limit = resolve_limit(max_memory)
    if estimate > limit:
        raise ResourceLimitError(parameter, value, f"a size that fits the memory limit: {what} needs about "
                                 f"{format_bytes(estimate)}, the limit is {format_bytes(limit)} "
                                 "(max_memory raises it)", estimate, limit)


# ------------------------------------------------------------------ estimators
def array_bytes(count: float, itemsize: int = 8, copies: float = 1.0) -> float:
    """``count`` items of ``itemsize`` bytes, ``copies`` arrays of them alive at once."""
    return float(count) * itemsize * copies


def lp_bytes(rows: float, cols: float, nonzeros: float) -> float:
    """A sparse LP/MILP built with scipy and solved by HiGHS.

    Measured on ``design``: about 600 bytes per nonzero, 800 per row and 200 per column at
    peak (the COO/CSR copies, HiGHS's presolve and factor); e.g. ``n = 200000``, SD 1
    (400000 rows, 800000 nonzeros) peaks at 650 MB over the interpreter.
    """
    return 600.0 * nonzeros + 800.0 * rows + 200.0 * cols


def design_lp_bytes(values: int, shifts: int, *, kind: str, held: float | None = None) -> float:
    """The finite design (Kadam et al. (13)-(15)) over ``values`` noise values and ``shifts``
    ordered distances: ``kind`` ``"pure"`` (LP (14)), ``"dp"`` (LP with one hockey-stick
    variable per value and distance) or ``"pdp"`` (MILP: indicator and product variables).
    ``held``: the (distance, value) pairs the model holds (default all, ``values * shifts``;
    fewer in a round of row generation)."""
    nk = float(values) * float(shifts) if held is None else float(held)
    if kind == "pure":
        return lp_bytes(nk, values, 2 * nk)
    if kind == "dp":
        return lp_bytes(nk + shifts, values + nk, 4 * nk)
    return lp_bytes(5 * nk + shifts, values + 2 * nk, 12 * nk)


def row_generation_bytes(values: int, shifts: int) -> float:
    """What row generation over ``values`` x ``shifts`` (distance, value) pairs holds besides
    its models: the shift table (int64), the mask of rows held and the float temporaries of
    the violation check, about three 8-byte arrays of that size. Each model it solves is
    checked with :func:`design_lp_bytes` (``held``) before it is built."""
    return array_bytes(float(values) * float(shifts), 8, 3.0)


def pairs_bytes(pairs: float, window: float, *, exact: bool = False) -> float:
    """The neighbouring pairs of an analysis: ``pairs`` pairs of ``window`` masses each.

    Float: a few float64 arrays per pair (masses, ratios, sort order); measured 25 bytes per
    mass (geometric noise, BD 3000: 1.8e7 masses, 440 MB). Exact: Fractions with their
    numerators, denominators and grouped ratios; measured 550 bytes per mass (BD 300).
    """
    per_mass = 800.0 if exact else 40.0
    return float(pairs) * float(window) * per_mass


def channel_bytes(inputs: float, outputs: float, copies: float = 6.0) -> float:
    """A dense channel ``P[input, output]`` and the temporaries of its analysis/costs."""
    return array_bytes(float(inputs) * float(outputs), 8, copies)


def distances_bytes(count: float) -> float:
    """A neighbourhood of ``count`` query distances (Python ints in tuples and dicts, closed
    under negation: about 200 bytes each while it is built)."""
    return 200.0 * float(count)


def tailed_lp_bytes(window: float, period: float, *, extra_rows: float = 0.0, extra_nonzeros: float = 0.0,
                    symmetric: bool = False) -> float:
    """The integer-line LP (Geng & Viswanath Section VI; Qin et al.) over a window of
    ``window`` masses with tails of ``period``: one DP row per ordered pair at distance
    ``<= period`` (``2 period window`` rows, two nonzeros each, plus the index arrays that
    build them), and ``extra_rows``/``extra_nonzeros`` of an epigraph (Wasserstein)."""
    rows = 2.0 * float(period) * (float(window) + 2.0 * float(period))
    if symmetric:
        rows /= 2.0
    return lp_bytes(rows + extra_rows, window, 2.0 * rows + extra_nonzeros) + 64.0 * rows


def pld_bytes(cells: float, k: float) -> float:
    """A privacy loss distribution of ``cells`` grid points self-composed ``k`` times with
    dp_accounting (its support grows linearly in ``k``; FFTs hold a few complex copies).
    Measured: geometric(0.5) with 13863 cells, ``k = 10000``, peaks at 2.2 GB."""
    return 24.0 * float(cells) * max(float(k), 1.0) + 16.0 * float(cells)
