"""Report-noisy-max over integer scores, drawn exactly: permute-and-flip and the exponential
mechanism.

The scores ``s_1..s_k`` are integers (keys' totals on the resolution grid) whose
*sensitivity* ``Delta`` bounds ``max_i |s_i(D) - s_i(D')|`` over neighbouring tables -- in
either direction and in several coordinates at once (under ``replace`` one unit's rows move
some totals down and others up; under ``add-remove`` a unit's rows can move every key it
touches). With ``gamma_i = epsilon (s* - s_i) / (2 Delta)``, ``s* = max_j s_j``:

* **permute-and-flip** (McKenna & Sheldon, NeurIPS 2020, Algorithm 1): visit the keys in a
  uniformly random order and return the first key ``i`` whose coin ``Bernoulli(exp(-gamma_i))``
  comes up heads (the maximum's coin always does);
* **exponential mechanism** (McSherry & Talwar 2007; Dwork & Roth 2014, Def. 3.4):
  ``P(i) ∝ exp(-gamma_i)``, drawn by rejection: propose a uniform key, accept it with
  probability ``exp(-gamma_i)``; the accepted key has exactly the law ``exp(-gamma_i) / sum``.

**Guarantee (by theorem, not computed).** Both are ``epsilon``-DP for every pair of score
vectors with ``||s - s'||_inf <= Delta``: McKenna & Sheldon 2020, the privacy theorem of their
Algorithm 1 (permute-and-flip)
and Dwork & Roth 2014, Theorem 3.10 (exponential mechanism), each with the factor ``2`` in
``epsilon / (2 Delta)``. The factor 2 is the general one, for *non-monotone* scores (some
scores up and others down between neighbours, as ``replace`` does, and as ``add-remove``
can on a peak whose keys a unit touches with signed changes); the factor-1 variants are
only valid for monotone scores and are not offered. :func:`noisy_max_certificate` states
this with ``exact: false``; :func:`noisy_max_law` gives the exact output law on small cases
(elementary symmetric polynomials for permute-and-flip; mpmath at a stated precision), used
by the tests to check the ratio on every neighbouring score vector of tiny cases.

**Exact sampling (the argument).** ``epsilon`` is taken as the exact rational value of the
float (``Fraction(epsilon)``, a dyadic rational), never rounded. Then
``gamma_i = num_i / den`` with integers, split as ``W_i + f_i / den``, and
``Bernoulli(exp(-gamma_i))`` is the AND of independent ``Bernoulli(exp(-W_i))`` and
``Bernoulli(exp(-f_i / den))`` trials (Canonne, Kamath & Steinke 2020, Algorithm 1, via
:func:`~optnoise.sampling.integer_line.bernoulli_exp`: comparisons of uniform integers only,
no float on any decision; in int64 when ``den < 2^54``, else the same algorithm on Python
integers with ``source.randbelow``). The random order is a vectorised Fisher-Yates shuffle on exact
uniform integers (:func:`~optnoise.sampling.words.uniform_below`). Randomness is injected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import RandomSource, SystemRandomSource
from ..target import check_epsilon
from .integer_line import bernoulli_exp
from .words import check_count, uniform_below

NoisyMaxMethod = Literal["permute-and-flip", "exponential"]
METHODS: tuple[str, ...] = ("permute-and-flip", "exponential")
#: Exponents ``gamma_i`` with a denominator below this are drawn vectorised in int64 (the
#: Bernoulli trials multiply it by their index, up to ~2^8 before a trial fails surely enough);
#: larger ones (a float epsilon's 2^52 denominator times ``2 Delta``) by the Python-integer path.
MAX_EXPONENT_DEN = 1 << 54
#: Privacy factor: ``epsilon / (FACTOR * Delta)`` in the exponent (non-monotone scores).
FACTOR = 2


def check_scores(scores: object) -> np.ndarray:
    """Integer scores, one per key (at least one), as int64."""
    arr = np.asarray(scores)
    if arr.ndim != 1 or arr.size < 1 or arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
        raise InvalidParameterError("scores", f"{arr.dtype} of shape {arr.shape}",
                                    "a non-empty 1-D array of integer scores (totals on the resolution grid)")
    if arr.size and np.abs(arr).max() >= 2 ** 62:
        raise InvalidParameterError("scores", int(np.abs(arr).max()), "scores below 2^62 in magnitude")
    return arr.astype(np.int64)


def check_sensitivity(sensitivity: object) -> int:
    """``Delta``: a positive integer (on the scores' grid)."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "a positive integer (on the scores' grid)")
    if sensitivity >= 1 << 40:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer below 2^40")
    return int(sensitivity)


def exponent_epsilon(epsilon: float, sensitivity: int) -> Fraction:
    """The exact rational epsilon used in the exponent: ``Fraction(epsilon)``, the float's
    exact (dyadic) value -- no rounding."""
    check_sensitivity(sensitivity)
    return Fraction(check_epsilon(epsilon, allow_zero=False))


def exponents(scores: np.ndarray, eps: Fraction, sensitivity: int) -> tuple[list[int], list[int], int]:
    """``gamma_i = eps (s* - s_i) / (2 Delta) = W_i + f_i / den`` as Python integers ``W``, ``f``
    and ``den`` (exact)."""
    den = FACTOR * sensitivity * eps.denominator
    top = int(scores.max())
    nums = [eps.numerator * (top - int(s)) for s in scores]
    return [n // den for n in nums], [n % den for n in nums], den


def _unit_coin(num: int, den: int, source: RandomSource) -> bool:
    """Exact ``Bernoulli(exp(-num/den))`` for ``0 <= num <= den`` in Python integers (CKS20
    Alg. 1: ``K`` = index of the first failing ``Bernoulli(num / (den k))``; heads iff ``K``
    odd), for exponents whose denominator is too large for the int64 path."""
    k = 1
    while source.randbelow(den * k) < num:
        k += 1
    return k % 2 == 1


def _coins(whole: list[int], frac: list[int], den: int, keys: np.ndarray, source: RandomSource) -> np.ndarray:
    """Independent exact ``Bernoulli(exp(-gamma_key))`` for each entry of ``keys``: the AND of
    ``Bernoulli(exp(-W))`` and ``Bernoulli(exp(-f / den))``, vectorised in int64 when ``den``
    is below :data:`MAX_EXPONENT_DEN`, else in Python integers (both exact)."""
    if keys.size == 0:
        return np.zeros(0, dtype=bool)
    if den < MAX_EXPONENT_DEN and max(whole) < 1 << 62:
        w = np.array(whole, dtype=np.int64)
        f = np.array(frac, dtype=np.int64)
        ok = bernoulli_exp(w[keys], np.ones(keys.size, dtype=np.int64), source)
        live = np.flatnonzero(ok)
        if live.size:
            ok[live] = bernoulli_exp(f[keys[live]], np.full(live.size, den, dtype=np.int64), source)
        return ok
    out = np.zeros(keys.size, dtype=bool)
    for i, key in enumerate(keys.tolist()):
        out[i] = all(_unit_coin(1, 1, source) for _ in range(min(whole[key], 1 << 62))) \
            and _unit_coin(frac[key], den, source)
    return out


def _shuffles(k: int, count: int, source: RandomSource) -> np.ndarray:
    """``count`` independent uniform permutations of ``0..k-1`` (Fisher-Yates, vectorised:
    step ``i`` swaps position ``i`` with a uniform position in ``i..k-1``)."""
    perm = np.tile(np.arange(k, dtype=np.int64), (count, 1))
    rows = np.arange(count)
    for i in range(k - 1):
        j = i + uniform_below(k - i, count, source)
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return perm


def permute_and_flip(scores: object, epsilon: float, sensitivity: int, count: int = 1, *,
                     source: RandomSource | None = None) -> np.ndarray:
    """``count`` independent permute-and-flip draws (indices of keys), exactly.

    Parameters
    ----------
    scores
        Integer score per key (e.g. the keys' totals on the resolution grid).
    epsilon
        The privacy parameter (exact rational of the float: :func:`exponent_epsilon`).
    sensitivity
        ``Delta``: the largest change of any one score between neighbouring tables.
    count
        Independent draws.
    source
        Random bits (default: the operating system's CSPRNG).

    Notes
    -----
    McKenna & Sheldon 2020, Algorithm 1 with coins ``exp(eps (s_i - s*) / (2 Delta))``;
    ``epsilon``-DP by their privacy theorem for Algorithm 1 (module docstring: exact coins,
    exact shuffles).
    """
    s = check_scores(scores)
    count = check_count(count)
    eps = exponent_epsilon(epsilon, sensitivity)
    whole, frac, den = exponents(s, eps, check_sensitivity(sensitivity))
    src = source if source is not None else SystemRandomSource()
    perm = _shuffles(s.size, count, src)
    out = np.full(count, -1, dtype=np.int64)
    pending = np.arange(count)
    for i in range(s.size):
        if pending.size == 0:
            break
        keys = perm[pending, i]
        heads = _coins(whole, frac, den, keys, src)
        out[pending[heads]] = keys[heads]
        pending = pending[~heads]
    return out


def exponential_mechanism(scores: object, epsilon: float, sensitivity: int, count: int = 1, *,
                          source: RandomSource | None = None) -> np.ndarray:
    """``count`` independent draws of the exponential mechanism ``P(i) ∝ exp(eps s_i / (2 Delta))``,
    exactly (parameters as :func:`permute_and_flip`).

    Notes
    -----
    Rejection: a uniform key ``i`` is accepted with probability ``exp(-gamma_i)``, so each round
    returns ``i`` with probability ``exp(-gamma_i) / k`` and the accepted key has exactly the
    law ``exp(-gamma_i) / sum_j exp(-gamma_j)``; a maximum is accepted surely, so a round
    succeeds with probability ``>= 1 / k``. ``epsilon``-DP by Dwork & Roth 2014, Theorem 3.10.
    """
    s = check_scores(scores)
    count = check_count(count)
    eps = exponent_epsilon(epsilon, sensitivity)
    whole, frac, den = exponents(s, eps, check_sensitivity(sensitivity))
    src = source if source is not None else SystemRandomSource()
    out = np.full(count, -1, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        keys = uniform_below(s.size, pending.size, src)
        heads = _coins(whole, frac, den, keys, src)
        out[pending[heads]] = keys[heads]
        pending = pending[~heads]
    return out


def noisy_max(scores: object, epsilon: float, sensitivity: int, *, method: NoisyMaxMethod = "permute-and-flip",
              count: int = 1, source: RandomSource | None = None) -> np.ndarray:
    """Report-noisy-max by ``method`` (``"permute-and-flip"`` or ``"exponential"``): ``count``
    key indices, exactly drawn (see :func:`permute_and_flip`, :func:`exponential_mechanism`)."""
    if method not in METHODS:
        raise InvalidParameterError("method", method, "'permute-and-flip' or 'exponential'")
    draw = permute_and_flip if method == "permute-and-flip" else exponential_mechanism
    return draw(scores, epsilon, sensitivity, count, source=source)


# ------------------------------------------------------------------ exact law and guarantee
def noisy_max_law(scores: object, epsilon: float, sensitivity: int, *,
                  method: NoisyMaxMethod = "permute-and-flip", dps: int = 50) -> list:
    """The exact output law ``P(i)`` of what :func:`noisy_max` samples, as mpmath numbers at
    ``dps`` decimal digits (every step is a few sums and products of ``exp`` of the exact
    rational exponents, so the relative error is below ``k^2 10^-(dps-2)``).

    Permute-and-flip: key ``r`` is returned iff its coin is heads and every key before it in
    the order is tails; a set ``S`` of the other keys precedes ``r`` (and the rest follow)
    with probability ``|S|! (k-1-|S|)! / k!``, so
    ``P(r) = p_r sum_m e_m({1 - p_j}_{j != r}) / (k C(k-1, m))`` with ``p_j = exp(-gamma_j)``
    and ``e_m`` the elementary symmetric polynomials. Exponential: ``p_r / sum_j p_j``.
    """
    import mpmath

    if method not in METHODS:
        raise InvalidParameterError("method", method, "'permute-and-flip' or 'exponential'")
    s = check_scores(scores)
    eps = exponent_epsilon(epsilon, sensitivity)
    delta = check_sensitivity(sensitivity)
    with mpmath.workdps(dps):
        top = int(s.max())
        p = [mpmath.exp(-mpmath.mpf(eps.numerator) * (top - int(v)) / (FACTOR * delta * eps.denominator)) for v in s]
        k = len(p)
        if method == "exponential":
            total = mpmath.fsum(p)
            return [x / total for x in p]
        law = []
        for r in range(k):
            e = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (k - 1)      # e_m of {1 - p_j}, j != r
            for j in range(k):
                if j != r:
                    for m in range(k - 1, 0, -1):
                        e[m] += e[m - 1] * (1 - p[j])
            law.append(p[r] * mpmath.fsum(e[m] / (k * math.comb(k - 1, m)) for m in range(k)))
        return law


@dataclass(frozen=True)
class NoisyMaxCertificate:
    """The guarantee of report-noisy-max, by theorem (``exact = False``: not computed).

    ``epsilon`` is the pure-DP guarantee for score vectors with ``||s - s'||_inf <= Delta``
    (``sensitivity``), under either change of a unit that moves scores by at most ``Delta``;
    ``epsilon_used`` the exact rational in the exponent (the float's exact value).
    """

    method: str
    epsilon: float
    epsilon_used: Fraction
    sensitivity: int
    factor: int
    theorem: str
    exact: bool = False

    def to_json(self) -> dict:
        return {"method": self.method, "epsilon": self.epsilon, "delta": 0.0, "epsilon_used": str(self.epsilon_used),
                "sensitivity": self.sensitivity, "exponent": f"epsilon * (score - max) / ({self.factor} * sensitivity)",
                "neighbourhood": "every score may move by up to the sensitivity, in either direction, "
                                 "several at once (replace or add-remove of one unit)",
                "theorem": self.theorem, "exact": self.exact}


THEOREMS = {
    "permute-and-flip": "McKenna & Sheldon 2020 (Permute-and-Flip, NeurIPS), privacy theorem of Algorithm 1: epsilon-DP with "
                        "coins exp(epsilon (q_r - q*) / (2 Delta)) for any quality function of sensitivity Delta",
    "exponential": "Dwork & Roth 2014 (The Algorithmic Foundations of DP), Theorem 3.10: the exponential mechanism "
                   "with exp(epsilon u / (2 Delta u)) is epsilon-DP for any utility of sensitivity Delta u",
}


def noisy_max_certificate(method: NoisyMaxMethod, epsilon: float, sensitivity: int) -> NoisyMaxCertificate:
    """The theorem's guarantee for :func:`noisy_max` with these parameters (``exact: false``)."""
    if method not in METHODS:
        raise InvalidParameterError("method", method, "'permute-and-flip' or 'exponential'")
    eps = check_epsilon(epsilon, allow_zero=False)
    return NoisyMaxCertificate(method, eps, exponent_epsilon(eps, sensitivity), check_sensitivity(sensitivity),
                               FACTOR, THEOREMS[method])


__all__ = [
    "FACTOR", "MAX_EXPONENT_DEN", "METHODS", "NoisyMaxCertificate", "NoisyMaxMethod", "THEOREMS", "check_scores",
    "check_sensitivity", "exponent_epsilon", "exponential_mechanism", "exponents", "noisy_max",
    "noisy_max_certificate", "noisy_max_law", "permute_and_flip",
]
