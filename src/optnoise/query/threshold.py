"""Keys found in the data (issue 36): a key is released only when its noisy count of units
passes a threshold, and the threshold's delta is exact.

A statistic with ``keys = "from-data"`` has no declared keys: its candidate keys are those
the counted units hold. Each candidate key's count of units ``c`` gets the cell's certified
noise ``Z`` (the quantized law that is sampled, :class:`~optnoise.sampling.quantized.QuantizedInteger`);
the key is released, with its value ``c + Z``, iff ``c + Z >= tau``. A key that only one unit
holds is the risk: its mere presence in the document would reveal that unit. With ``m`` the
most keys one unit can hold (``unit.max_groups``, 1 when a unit is counted in one cell), the
probability that a unit's own keys show is at most ``1 - (1 - p)^m`` with
``p = P[1 + Z >= tau] = P[Z >= tau - 1]`` -- computed here **exactly** (a rational number) from
the quantized weights and the dyadic tail ratios, not from a float formula, then rounded up.
The selection adds that delta and an epsilon of ``m ln(1 / (1 - p))`` to the unit's total.

**A randomised boundary** (:func:`randomised_threshold`): the integer threshold leaves part of
the delta unused. A key whose noisy count is exactly ``tau - 1`` is released with probability
``q = a / 2^64`` (a coin: one uniform 64-bit word below ``a``), the largest such ``q`` with
``1 - (1 - p(q))^m <= delta`` for ``p(q) = P[Z >= tau - 1] + q P[Z = tau - 2]`` -- exact
rationals again. The rules ``(tau, q)`` are ordered (``(tau, 1)`` is ``(tau - 1, 0)``), every
key's release probability grows along the order, so the least ``tau`` and then the largest
``q`` keep the most keys of every count at the target delta.

Proof: docs/proofs/key-selection.md (the decomposition of the release into the counts of the
keys a unit shares with the others -- composed with the rest of the publication as the counts
are -- and the event that one of its own keys shows; both directions; add-remove and replace).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..analysis.exact import float_up, log_up
from ..errors import InvalidParameterError
from ..sampling.quantized import QuantizedInteger
from ..target import check_delta

#: The bits of the boundary probability ``q = a / 2^BOUNDARY_BITS`` (one uniform word per coin).
BOUNDARY_BITS = 64
#: What a document says of a selection composed inside the cells' profile (:attr:`Threshold.in_cells`).
IN_CELLS_WORDS = ("in the cells' composed profile: each cell's pairs are its count moved by one and a key held by "
                  "the unit alone (shown with the probability above, or never), composed over the cells one unit "
                  "moves; the unit's total adds no shift for it (selection_epsilon and selection_delta are the "
                  "shift a ledger adds, composing the noise alone)")
#: The largest threshold searched (a noisy count of units beyond it is never needed: the
#: geometric's tail at eps = 0.001 drops by e^-1 every 1,000 steps).
MAX_THRESHOLD = 10 ** 7


def upper_tail(noise: QuantizedInteger, k: int) -> Fraction:
    """``P[Z >= k]`` exactly for the quantized noise ``Z`` (window weights ``W`` on ``lo..hi``,
    tails ``W[block] r^t`` with the dyadic ratio ``r``: :class:`QuantizedInteger`).

    Beyond ``hi`` the right tail's values ``hi + (t-1)*period + s`` (``t >= 1``, ``s =
    1..period``) have masses ``W[hi - period + s] r^t / Z``, the left tail's ``lo - t*period + s``
    (``s = 0..period-1``) masses ``W[lo + s] r^t / Z`` (:meth:`optnoise.pmf.IntegerPMF.mass`);
    a sum over ``t >= t0`` is ``W r^t0 / (1 - r) / Z``. For ``k <= lo`` the answer is ``1``
    minus the left tail's mass below ``k``.
    """
    w = [int(x) for x in noise.weights]
    lo, hi = noise.lo, noise.hi
    z = _normaliser(w, noise)
    if k <= lo:
        return 1 - _left_below(w, noise, k) / z
    window = sum(w[k - lo:]) if k <= hi else 0
    return (window + _right_from(w, noise, max(k, hi + 1))) / z


def _ratio(tail: tuple[int, int, int]) -> Fraction:
    return Fraction(tail[0], 1 << tail[1])


def _normaliser(w: list[int], noise: QuantizedInteger) -> Fraction:
    """``Z``: the window's weight plus each tail's ``B r / (1 - r)``."""
    total = Fraction(sum(w))
    for tail, block in ((noise.left, w[:noise.left[2]] if noise.left else []),
                        (noise.right, w[-noise.right[2]:] if noise.right else [])):
        if tail is not None:
            r = _ratio(tail)
            total += sum(block) * r / (1 - r)
    return total


def _right_from(w: list[int], noise: QuantizedInteger, k: int) -> Fraction:
    """The right tail's weight on ``k, k+1, ...`` (``k > hi``), unnormalised."""
    if noise.right is None:
        return Fraction(0)
    r, period = _ratio(noise.right), noise.right[2]
    block = w[-period:]
    hi = noise.hi
    total = Fraction(0)
    for s in range(1, period + 1):   # values hi + (t-1)*period + s, t >= 1, at least k
        t0 = max(1, 1 - ((hi + s - k) // period))
        total += block[s - 1] * r ** t0 / (1 - r)
    return total


def _left_below(w: list[int], noise: QuantizedInteger, k: int) -> Fraction:
    """The left tail's weight on ``..., k-2, k-1`` (``k <= lo``), unnormalised."""
    if noise.left is None:
        return Fraction(0)
    r, period = _ratio(noise.left), noise.left[2]
    block = w[:period]
    lo = noise.lo
    total = Fraction(0)
    for s in range(period):          # values lo - t*period + s, t >= 1, at most k - 1
        t0 = max(1, -(-(lo + s - (k - 1)) // period))
        total += block[s] * r ** t0 / (1 - r)
    return total


def selection_cost(p: Fraction, keys_per_unit: int) -> tuple[float, float]:
    """What releasing keys found in the data adds to the unit's total (module docstring):
    ``(m ln(1 / (1 - p)), 1 - (1 - p)^m)`` -- an epsilon and a delta, both rounded up -- for
    the probability ``p`` that a key held by one unit alone is shown and ``m`` keys per unit.
    With the rest of the publication ``(epsilon, delta)``-DP, the whole is
    ``(epsilon + eps_shift, delta + delta_shift)``-DP, under add-remove and replace alike.

    Proof: docs/proofs/key-selection.md.
    """
    if not 0 <= p < 1:
        raise InvalidParameterError("p", float(p), "a probability below 1")
    m = int(keys_per_unit)
    if m < 1:
        raise InvalidParameterError("unit.max_groups", keys_per_unit, "an integer >= 1")
    hidden = (1 - p) ** m
    return m * log_up(1 / (1 - p)) if p else 0.0, float_up(1 - hidden)


@dataclass(frozen=True)
class Threshold:
    """A designed threshold: keys whose noisy count of units is at least ``tau`` are released.

    ``p`` is the exact probability that a key held by one unit alone is released;
    ``epsilon_shift`` and ``delta`` what the selection adds to the unit's total
    (:func:`selection_cost`)."""

    tau: int
    p: Fraction
    keys_per_unit: int
    epsilon_shift: float
    delta: float
    #: ``q``: a key whose noisy count is ``tau - 1`` is released with this probability
    #: (``a / 2^BOUNDARY_BITS``; 0: none is).
    boundary: Fraction = Fraction(0)
    #: The selection is inside the cells' composed profile (:mod:`.found_gaussian`): the unit's
    #: total composes it with the cells and adds no shift; ``epsilon_shift`` and ``delta`` are
    #: then what a ledger, which composes the noise alone, adds on top.
    in_cells: bool = False

    def keeps(self, value: float, word: int | None = None) -> bool:
        """Whether a key of noisy count ``value`` is released; at the boundary (``value = tau -
        1``, ``q > 0``) the coin is the uniform ``BOUNDARY_BITS``-bit integer ``word``: released
        iff ``word < q 2^BOUNDARY_BITS`` (probability ``q`` exactly).

        Proof: docs/proofs/key-selection.md
        """
        if value >= self.tau:
            return True
        if value != self.tau - 1 or not self.boundary:
            return False
        if word is None:
            raise InvalidParameterError("word", word, f"a uniform {BOUNDARY_BITS}-bit integer at the boundary")
        return int(word) < self.boundary * (1 << BOUNDARY_BITS)

    def to_json(self) -> dict:
        q = self.boundary
        return {"threshold": self.tau, "boundary_count": self.tau - 1,
                "boundary_probability": float(q),
                "boundary_probability_exact": f"{q * (1 << BOUNDARY_BITS)}/2^{BOUNDARY_BITS}",
                "keys_per_unit": self.keys_per_unit,
                "one_unit_key_shown": float_up(self.p), "selection_epsilon": self.epsilon_shift,
                "selection_delta": self.delta, **({"selection_accounted": IN_CELLS_WORDS} if self.in_cells else {}),
                "rule": "a key is released iff its noisy count of units is at least the threshold, or equals the "
                        "boundary count and a coin of the boundary probability falls (a uniform 64-bit word below "
                        "its numerator); the probability that a key held by one unit alone is released is exact "
                        "(the quantized noise's law), rounded up"}


def smallest_threshold(noise: QuantizedInteger, keys_per_unit: int, delta: float) -> Threshold:
    """The smallest ``tau >= 1`` whose selection delta (:func:`selection_cost`) is at most
    ``delta`` -- by bisection, the delta being non-increasing in ``tau`` (a tail probability).

    Raises
    ------
    InvalidParameterError
        ``delta`` is not in (0, 1), or no threshold up to :data:`MAX_THRESHOLD` meets it.
    """
    goal = Fraction(check_delta(delta, positive=True, accepted="a delta in (0, 1): keys found in the data need one "
                                "(a key held by one unit alone is shown with a small probability)"))
    m = int(keys_per_unit)

    def meets(tau: int) -> bool:   # exact: 1 - (1 - p)^m <= delta
        return 1 - (1 - upper_tail(noise, tau - 1)) ** m <= goal

    lo, hi = 1, 2
    while not meets(hi):
        lo, hi = hi, hi * 2
        if hi > MAX_THRESHOLD:
            raise InvalidParameterError("delta", delta, f"a larger delta: no threshold up to {MAX_THRESHOLD} keeps "
                                        "a key held by one unit alone hidden with this probability")
    if meets(lo):
        hi = lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    p = upper_tail(noise, hi - 1)
    eps_shift, d = selection_cost(p, m)
    return Threshold(hi, p, m, eps_shift, d)


def release_probability(noise: QuantizedInteger, count: int, tau: int, q: Fraction = Fraction(0)) -> Fraction:
    """``P[count + Z >= tau] + q P[count + Z = tau - 1]``: a key of true count ``count`` is
    released under the rule ``(tau, q)`` (exact; the clamp of the noisy count to the cell's
    domain only lowers it while ``tau - 1`` is above the domain's least value)."""
    above = upper_tail(noise, tau - count)
    return above + q * (upper_tail(noise, tau - 1 - count) - above) if q else above


def randomised_threshold(noise: QuantizedInteger, keys_per_unit: int, delta: float, *,
                         lowest: int = 0) -> Threshold:
    """:func:`smallest_threshold` with the largest boundary probability ``q = a / 2^64`` still
    meeting ``delta`` (module docstring) -- by bisection on ``a``, the delta being increasing in
    ``q`` -- where the boundary count ``tau - 1`` is above ``lowest`` (the cell's least value,
    where the clamp gathers the lower tail); else ``q = 0``.

    Proof: docs/proofs/key-selection.md
    """
    plain = smallest_threshold(noise, keys_per_unit, delta)
    if plain.tau - 1 <= lowest:
        return plain
    goal, m, tau = Fraction(delta), plain.keys_per_unit, plain.tau
    full = 1 << BOUNDARY_BITS

    above = upper_tail(noise, tau - 1)
    at = upper_tail(noise, tau - 2) - above   # P[Z = tau - 2]: a one-unit key at the boundary

    def meets(a: int) -> bool:   # exact: 1 - (1 - p(a / 2^64))^m <= delta
        return 1 - (1 - above - Fraction(a, full) * at) ** m <= goal

    lo, hi = 0, full   # meets(lo); not meets(hi): q = 1 is the threshold tau - 1, which fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    if lo == 0:
        return plain
    q = Fraction(lo, full)
    p = above + q * at
    eps_shift, d = selection_cost(p, m)
    return Threshold(tau, p, m, eps_shift, d, q)


__all__ = ["BOUNDARY_BITS", "IN_CELLS_WORDS", "MAX_THRESHOLD", "Threshold", "randomised_threshold", "release_probability",
           "selection_cost", "smallest_threshold", "upper_tail"]
