"""Memory and time estimates and guards: refuse, before starting, what would not fit.

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

Time is a resource like memory (issue 26): a computation whose time follows from its
sizes (a channel LP/MILP, composing many releases, the exact certificate of a wide
neighbourhood) is estimated first and refused with
:class:`~optnoise.errors.TimeLimitError` (exit 2) beyond ``max_seconds``
(``None``: :data:`DEFAULT_SECONDS`), naming the estimate and the way out
(:func:`check_time`; estimators ``*_seconds``, calibrated on this code base on a
loaded two-core machine: they over-estimate on a fast one).

>>> parse_memory("1.5G"), parse_memory("512M"), parse_memory("4096")
(1610612736, 536870912, 4096)
>>> format_bytes(3 * 2**30)
'3 GiB'
>>> parse_seconds("90"), parse_seconds("5m"), parse_seconds("1.5h"), format_seconds(4000)
(90.0, 300.0, 5400.0, 'about 1.1 hours')
"""

from __future__ import annotations

import math
import os
import re

from .errors import InvalidParameterError, ResourceLimitError, TimeLimitError

#: Fraction of physical memory a single computation may plan to use by default.
DEFAULT_FRACTION = 0.5
#: Limit used where the platform does not report its memory (4 GiB).
FALLBACK_LIMIT = 4 * 2**30
#: Seconds a single computation may plan to take by default (``--max-seconds``).
DEFAULT_SECONDS = 300.0

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


# ------------------------------------------------------------------ time
_SECOND_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_seconds(text: str | float, *, parameter: str = "max_seconds") -> float:
    """Seconds of ``"90"``, ``"90s"``, ``"5m"``, ``"1.5h"`` (a number alone is seconds), > 0."""
    accepted = "a duration like 90, 90s, 5m or 1.5h (seconds without a unit), > 0"
    if isinstance(text, bool):
        raise InvalidParameterError(parameter, text, accepted)
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]{1,3}))?\s*([A-Za-z]*)\s*", str(text))
        if not m or m.group(3).lower() not in _SECOND_UNITS:
            raise InvalidParameterError(parameter, text, accepted)
        value = float(m.group(1) + (f"e{m.group(2)}" if m.group(2) else "")) * _SECOND_UNITS[m.group(3).lower()]
    if not (math.isfinite(value) and value > 0):
        raise InvalidParameterError(parameter, text, accepted)
    return value


def format_seconds(seconds: float) -> str:
    """``4000`` -> ``'about 1.1 hours'``; ``0.4`` -> ``'under a second'``."""
    if not math.isfinite(seconds):
        return "unbounded time"
    if seconds < 1:
        return "under a second"
    for unit, size, start in (("days", 86400.0, 172800.0), ("hours", 3600.0, 3600.0), ("minutes", 60.0, 120.0)):
        if seconds >= start:
            return f"about {seconds / size:.2g} {unit}"
    if seconds < 1.5:
        return "about 1 second"
    return f"about {seconds:.2g} seconds" if seconds < 10 else f"about {seconds:.0f} seconds"


def resolve_seconds(max_seconds: float | None) -> float:
    """``max_seconds`` itself, or :data:`DEFAULT_SECONDS` for ``None``."""
    return DEFAULT_SECONDS if max_seconds is None else float(max_seconds)


def check_time(estimate: float, *, parameter: str, value: object, what: str, way_out: str,
               max_seconds: float | None = None) -> None:
    """Raise :class:`TimeLimitError` when ``estimate`` seconds exceed ``max_seconds`` (``None``:
    :data:`DEFAULT_SECONDS`): as :func:`check` for time. ``way_out`` says what makes the
    computation shorter, in the user's terms (``"a smaller n"``); "max_seconds raises the
    limit" is added (the command line names ``--max-seconds``)."""
    limit = resolve_seconds(max_seconds)
    if estimate > limit:
        raise TimeLimitError(parameter, value, f"a computation that fits the time limit: {what} would take "
                             f"{format_seconds(estimate)}, the limit is {format_seconds(limit)} ({way_out}, or "
                             "max_seconds raises the limit)", estimate, limit)


def lp_seconds(nonzeros: float, *, milp: bool = False) -> float:
    """A HiGHS LP over ``nonzeros`` coefficients (the channel models): measured about
    ``2e-9 nnz^2`` seconds (n = 16..24 per record at delta 0.01: 0.7 s to 7 s for 1.9e4 to
    6.1e4 nonzeros, exponent 1.8 to 2.1); a MILP ten times that."""
    return (10.0 if milp else 1.0) * 2e-9 * float(nonzeros) ** 2


def pld_seconds(cells: float, k: float) -> float:
    """Composing ``k`` releases of a PLD of ``cells`` grid points with dp_accounting (its
    self-composition by FFT; the support grows with ``k``): measured 4.2 s at ``cells k =
    2.85e6`` and 70 s at ``2.85e8``, about ``5e-4 (cells k)^0.61``."""
    return 5e-4 * max(float(cells) * max(float(k), 1.0), 1.0) ** 0.61


def exact_seconds(pairs: float, cells: float) -> float:
    """The exact analysis (``verify --exact``) of ``pairs`` neighbouring pairs of ``cells``
    masses each (a geometric tail counted down to about ``2^-20``): measured 14 s and 72 s
    for geometric(0.99) with BD 100 and 200 (200 x 2965 and 400 x 3165), about
    ``1.5e-7 pairs^2 cells`` seconds (each pair's masses are compared against the others'
    ratios: quadratic in the pairs)."""
    return 1.5e-7 * float(pairs) ** 2 * float(cells)


def certify_seconds(cells: float, shifts: float, *, finite_support: bool = False) -> float:
    """The ratio lift and exact certificate of integer-line noise over a window of ``cells``
    values against ``shifts`` distances (Python integers): measured 2.7 s (1237 x 200) to
    25 s (about 1650 x 600), about ``3e-5`` seconds per (cell, distance). Noise with a
    finite support (the discrete Gaussian's window) is certified as zero-padded cyclic noise,
    vectorised: a whole per-record column took 5.8 s at 56,263 x 200 and 21 s at about
    101,445 x 600 (load 7-9), about ``3.5e-7`` per (cell, distance); ``5e-7`` is charged."""
    return (5e-7 if finite_support else 3e-5) * float(cells) * float(shifts)


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
