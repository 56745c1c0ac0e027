"""The exact channel of integer-line noise clamped to a finite domain, and its certificate.

Releasing ``clip(q + eta, 0, n)`` for a true value ``q`` in ``0..n`` is a *channel*, not
the noise: for approximate DP clamping is post-processing and can only tighten the
noise's certificate, but probabilistic DP is not closed under post-processing
(docs/concepts.md), so what is released must be certified as what it is. Row ``q`` of the
channel is the noise PMF shifted by ``q`` with its ends piled up:

* ``P[q, y] = p(y - q)`` for ``0 < y < n``;
* ``P[q, 0] = P(eta <= -q)`` and ``P[q, n] = P(eta >= n - q)``.

**Exact, from the quantized weights (the argument).** The quantized noise
(:class:`~optnoise.sampling.quantize.QuantizedInteger`) has integer window weights and
dyadic tails ``r = a / 2^m``; its masses are ``w L / (Z L)`` with ``L`` the lcm of the
``2^m - a`` (:func:`~optnoise.sampling.quantize.integer_line_form`). The window is first
extended exactly to cover ``-n..n`` (a tail cell ``t`` blocks out has weight
``w a^t 2^(m (B - t))`` once every weight is scaled by ``2^(m B)``), so every mass the rows
need is a window cell; the piles are prefix and suffix sums of window cells plus the whole
tail beyond the window, whose total is ``block a / (2^m - a)`` -- an integer in the same
units. Every entry is therefore an exact integer over one common denominator, and the
channel's certificate is the exact analysis of those integers
(:func:`optnoise.analysis.exact_profile`, vectorised, equal to the Fraction oracle). The
rows are built at once as shifts of one weight vector (fancy indexing) and two cumulative
sums, ``O(n^2)`` integers; the certificate visits ``n (n + 1)`` ordered pairs of
``n + 1`` cells under the per-record unit, and is refused beyond :data:`MAX_CELLS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..analysis import Guarantee, IntegerForm, PrivacyProfile, exact_profile, guarantee
from ..analysis.exact_fast import MAX_WEIGHT_BITS
from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs
from ..resources import check, pairs_bytes
from ..target import Target
from .quantize import QuantizedInteger, integer_line_form

#: Largest certificate, in cells visited (ordered pairs times outputs).
MAX_CELLS = 20_000_000


@dataclass(frozen=True, eq=False)
class ClampedChannel:
    """The channel ``clip(q + eta, 0, n)`` of quantized noise: exact rows and certificate."""

    form: IntegerForm
    pairs: InputPairs
    profile: PrivacyProfile
    certificate: Guarantee
    target: Target | None

    @property
    def size(self) -> int:
        return int(self.form.weights.shape[0])

    def meets(self) -> bool:
        """Whether the released channel meets its target (the one rule, exactly)."""
        if self.target is None:
            return math.isfinite(self.certificate.epsilon_pure)
        return self.profile.meets(self.target)


def _extended(q: QuantizedInteger, lo: int, hi: int) -> tuple[list[int], int]:
    """Window weights of the same exact PMF on ``min(q.lo, lo)..max(q.hi, hi)``, all scaled by
    one power of two, and the window's new ``lo``."""
    w = [int(x) for x in q.weights]
    left = -(-(q.lo - lo) // q.left[2]) if q.left is not None and lo < q.lo else 0
    right = -(-(hi - q.hi) // q.right[2]) if q.right is not None and hi > q.hi else 0
    m = max([q.left[1] * left if q.left else 0, q.right[1] * right if q.right else 0])
    scale = 1 << m
    out = [x * scale for x in w]
    if right:
        a, bits, period = q.right
        block = w[-period:]
        for t in range(1, right + 1):
            out += [x * a ** t << (m - bits * t) for x in block]
    new_lo = q.lo
    if left:
        a, bits, period = q.left
        block = w[:period]
        for t in range(1, left + 1):
            out = [x * a ** t << (m - bits * t) for x in block] + out
            new_lo -= period
    return out, new_lo


def clamped_form(q: QuantizedInteger, n: int) -> IntegerForm:
    """The exact channel ``P[q, y] = P(clip(q + eta, 0, n) = y)`` on ``0..n`` as integer rows
    over one denominator (module docstring).

    Raises
    ------
    InvalidParameterError
        ``n < 1``, or a domain so much wider than the window that the exact weights would
        exceed the exact analysis' ``2^1000``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (the domain 0..n)")
    n = int(n)
    w, lo = _extended(q, -n, n)
    form = integer_line_form(np.array(w, dtype=object), lo, q.left, q.right)
    if form.denominator.bit_length() > MAX_WEIGHT_BITS:
        raise InvalidParameterError("n", n, f"a domain the exact weights can span (clamping 0..{n} needs weights "
                                    f"of {form.denominator.bit_length()} bits, more than {MAX_WEIGHT_BITS})")
    cells = np.array([int(x) for x in form.weights], dtype=object)
    ratio = _common_factor(form, w)   # window cell k weighs w[k] L; a tail beyond it block a L / (2^m - a)
    tail_left = sum(w[:q.left[2]]) * q.left[0] * (ratio // ((1 << q.left[1]) - q.left[0])) if q.left else 0
    tail_right = sum(w[-q.right[2]:]) * q.right[0] * (ratio // ((1 << q.right[1]) - q.right[0])) if q.right else 0
    below = np.concatenate(([0], np.cumsum(cells)))          # below[j] = cells lo .. lo + j - 1
    total = int(below[-1])
    qs = np.arange(n + 1)
    rows = np.empty((n + 1, n + 1), dtype=object)
    if n > 1:
        rows[:, 1:n] = cells[(np.arange(1, n)[None, :] - qs[:, None]) - lo]
    rows[:, 0] = [tail_left + int(below[-x - lo + 1]) for x in qs]          # eta <= -q
    rows[:, n] = [tail_right + total - int(below[n - x - lo]) for x in qs]  # eta >= n - q
    weights = rows.astype(np.uint64) if max(int(v) for v in rows.ravel()) < 1 << 63 else rows
    return IntegerForm("channel", weights, form.denominator)


def _common_factor(form: IntegerForm, w: list[int]) -> int:
    """The factor ``L`` by which :func:`integer_line_form` scaled the window weights."""
    first = next(i for i, x in enumerate(w) if x)
    return int(form.weights[first]) // w[first]


def clamp_cells(n: int, pairs: InputPairs) -> int:
    """Cells the exact certificate of the clamped channel on ``0..n`` visits under ``pairs``."""
    return len(pairs.ordered(n + 1)) * (n + 1)


def certify_clamped(q: QuantizedInteger, n: int, pairs: InputPairs, target: Target | None = None, *,
                    max_memory: int | None = None) -> ClampedChannel:
    """The exact certificate of ``clip(q + eta, 0, n)`` under ``pairs`` (every ordered pair of
    ``0..n`` per record), evaluated at ``target`` when given.

    Raises
    ------
    InvalidParameterError
        When the certificate would visit more than :data:`MAX_CELLS` cells (a very wide
        domain), or its pairs would not fit in ``max_memory``.
    """
    cells = clamp_cells(n, pairs)
    if cells > MAX_CELLS:
        raise InvalidParameterError("n", n, f"a domain whose clamped channel can be certified exactly "
                                    f"({cells:.3g} cells, at most {MAX_CELLS:.3g})")
    check(pairs_bytes(1, n + 1, exact=True), parameter="n", value=n, max_memory=max_memory,
          what=f"the exact analysis of the clamped channel on 0..{n}")
    form = clamped_form(q, n)
    profile = exact_profile(form, pairs)
    cert = guarantee(profile) if target is None else guarantee(profile, target.epsilon, target.delta)
    return ClampedChannel(form, pairs, profile, cert, target)


__all__ = ["ClampedChannel", "MAX_CELLS", "certify_clamped", "clamp_cells", "clamped_form"]
