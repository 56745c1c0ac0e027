"""Closed forms of Kadam et al. 2024 for the error-rate-optimal noise.

All of them are for the *directed* neighbourhoods the paper's proofs use: the
constraints (14c)/(27) are ``f(eta) <= e^eps f(eta + mu)`` for the listed
``mu`` only. Each is checked against the LP/MILP in ``tests/test_design.py``;
:func:`closed_form_delta0` is used as a fast path only for the cases those tests
cover (directed SD and BD, ER, ``delta = 0``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import Neighbourhood
from ..target import check_delta


def lemma3_sd(n: int, mu: int, epsilon: float) -> np.ndarray:
    """Lemma 3: SD neighbourhood ``{mu}``, ``delta = 0`` (both cases).

    The masses along the orbit ``0, mu, 2 mu, ...`` (mod ``n + 1``) decay as
    ``e^(-k eps)``; values off the orbit (case 2, ``gcd(n+1, mu) > 1``) get 0;
    ``f(0) = (1 - e^-eps) / (1 - e^(-N eps))`` with ``N = (n+1)/gcd(n+1, mu)``
    (eqs. (17)-(18)).
    """
    size = n + 1
    orbit = size // math.gcd(size, mu)
    f = np.zeros(size)
    f0 = (1 - math.exp(-epsilon)) / (1 - math.exp(-orbit * epsilon))
    for k in range(orbit):
        f[(k * mu) % size] = f0 * math.exp(-k * epsilon)
    return f


def lemma4_bd(n: int, mu_bar: int, epsilon: float) -> np.ndarray:
    """Lemma 4: BD neighbourhood ``{1..mu_bar}``, ``delta = 0``.

    A staircase: ``f(eta) = f(0) e^(-i eps)`` for ``(i-1) mu_bar < eta <= i mu_bar``
    (eq. (28)), ``f(0)`` from (29) with ``n = b mu_bar + r``.
    """
    b, r = divmod(n, mu_bar)
    f0 = 1.0 / (1.0 + mu_bar * sum(math.exp(-i * epsilon) for i in range(1, b + 1))
                + r * math.exp(-(b + 1) * epsilon))
    eta = np.arange(1, n + 1)
    steps = (eta - 1) // mu_bar + 1
    return np.concatenate(([f0], f0 * np.exp(-steps * epsilon)))


def limit_error_rate_sd(epsilon: float) -> float:
    """(44): the n -> infinity optimal error rate for SD, ``max(1/2, ...)`` as printed.

    See docs/paper-notes.md: the printed cap at 0.5 is checked in the tests.
    """
    return 0.5 if epsilon <= math.log(2) else math.exp(-epsilon)


def limit_error_rate_bd(epsilon: float, mu_bar: int) -> float:
    """(48): the n -> infinity optimal error rate for BD ``mu_bar``, as printed."""
    if epsilon <= math.log(1 + mu_bar):
        return 0.5
    x = mu_bar * math.exp(-epsilon)
    return x / (x + 1 - math.exp(-epsilon))


def limit_error_rate_bd_uncapped(epsilon: float, mu_bar: int) -> float:
    """(47) without the cap: ``mu_bar e^-eps / (mu_bar e^-eps + 1 - e^-eps)``."""
    x = mu_bar * math.exp(-epsilon)
    return x / (x + 1 - math.exp(-epsilon))


def closed_form_delta0(n: int, epsilon: float, nb: Neighbourhood) -> np.ndarray | None:
    """The fast path: Lemma 3 / Lemma 4 for directed SD / BD, else ``None``."""
    if not nb.directed or nb.dimension != 1:
        return None
    ds = sorted(nb.distances)  # type: ignore[type-var]
    if any(d < 1 or d > n for d in ds):  # type: ignore[operator]
        return None
    if len(ds) == 1:
        return lemma3_sd(n, int(ds[0]), epsilon)  # type: ignore[arg-type]
    if ds == list(range(1, len(ds) + 1)):
        return lemma4_bd(n, len(ds), epsilon)
    return None


def _theorem2_sorted(m: int, epsilon: float, delta: float) -> np.ndarray:
    """Sorted optimal masses ``f_(0..m)`` of Theorem 2 for a chain of ``m + 1`` values."""
    e = math.exp(epsilon)

    def d_low(k: int) -> float:  # (19c)
        return math.exp(-(m - k) * epsilon) * (1 - math.exp(-epsilon)) / (1 - math.exp(-(m - k + 1) * epsilon))

    def d_up(k: int) -> float:  # (19a); equals e^eps * d_low(k)
        return math.exp(-(m - k - 1) * epsilon) * (1 - math.exp(-epsilon)) / (1 - math.exp(-(m - k + 1) * epsilon))

    h = np.arange(m + 1)
    if delta <= d_up(0) or m == 0:
        f0 = (1 - math.exp(-epsilon)) / (1 - math.exp(-(m + 1) * epsilon))
        return f0 * np.exp(-h * epsilon)
    for k in range(1, m + 1):
        lo = d_low(k)
        if delta <= lo:  # linear region k: (21)
            out = np.where(h <= m - k, delta * np.exp((m - k - h) * epsilon), 0.0)
            tail = h > m - k
            out[tail] = np.exp((m - h[tail]) * epsilon) * (e - 1) / (e ** k - 1) * (1 - delta / lo)
            return out
        if k == m or delta <= d_up(k):  # flat region k: (20)
            return np.where(h <= m - k, lo * np.exp((m - k - h) * epsilon), 0.0)
    raise AssertionError("unreachable")  # pragma: no cover


def theorem2_sd(n: int, mu: int, epsilon: float, delta: float, *, remark3: str = "corrected") -> np.ndarray:
    """Theorem 2 (with Remark 3): SD ``{mu}``, ``(eps, delta)``-PDP, error rate.

    The sorted masses ``f_(h) = f(h mu mod (n+1))`` follow the flat/linear regions
    (19)-(21). When ``gcd(n+1, mu) > 1`` only the orbit of 0 carries mass.
    Remark 3 as printed says to replace ``n`` by ``N_mu = (n+1)/gcd(n+1, mu)``;
    Lemma 3 (18c) and the solver need ``N_mu - 1`` (the chain has ``N_mu`` values):
    ``remark3="printed"`` reproduces the printed rule (see docs/paper-notes.md).
    """
    size = n + 1
    orbit = size // math.gcd(size, mu)
    m = orbit - 1 if remark3 == "corrected" else min(orbit, n)
    sorted_f = _theorem2_sorted(m, epsilon, delta)
    f = np.zeros(size)
    for k in range(min(orbit, sorted_f.size)):
        f[(k * mu) % size] = sorted_f[k]
    return f


def _xi(a: int, epsilon: float) -> float:
    """``xi_a = sum_{i'=0}^{a-1} e^(-i' eps)`` (Kadam, after (35))."""
    return sum(math.exp(-i * epsilon) for i in range(a))


def _groups_to_pmf(lengths: Sequence[int], heights: Sequence[float]) -> np.ndarray:
    """Expand staircase groups ``(length, height)`` into a PMF on ``{0..n}``."""
    return np.repeat(np.asarray(heights, dtype=float), np.asarray(lengths, dtype=int))


def theorem3_bd(n: int, mu_bar: int, epsilon: float, delta: float, *, unverified: bool = False) -> np.ndarray:
    """Theorem 3: BD ``{1..mu_bar}``, ``(eps, delta)``-PDP, error rate, ``b + r < mu_bar``.

    ``f*(0)`` against ``delta`` alternates flat regions (30)-(37) and linear
    regions (38)-(39) over the pairs ``(h, j)``, ``h in 1..b-1``, ``j in 1..h``,
    then ``f*(0) = delta`` (40)-(41). Before the first boundary
    ``delta_bar_{0,0} = phi_0 e^{-(b-1) eps}`` (37b) the Lemma 4 staircase is optimal.

    The theorem is about Kadam's PDP as printed in (13): one violation indicator
    per noise value shared by all distances (``formulation="paper"``); the
    per-distance PDP allows more. Two corrections (docs/paper-notes.md):

    * in a linear region the groups of length ``mu_bar - 1`` are
      ``i in [b-h+1 : b+1]`` minus the singleton ``b-h+j+1``; (38) prints
      ``[b-h+1 : b]``, whose lengths do not add up to ``n + 1`` when ``j < h``;
    * ``f(0) = delta`` with the rest uniform, (40)-(41), is feasible as soon as
      ``(1 - delta) / n <= e^eps delta``, not only in the last segment; where it
      beats the staircase (small ``eps``) it is the optimum.

    Verified against the MILP for ``b <= 3`` (tests/test_design.py): ``f*(0)``,
    hence the optimal error rate ``1 - f*(0)``, is exact there. The *PMF* of a
    linear region (39) is not always feasible: its singleton group can exceed
    ``e^eps`` times the value ``mu_bar`` further on, adding a second violating
    value; the optimum spreads that mass differently with the same ``f*(0)``. For
    ``b >= 4`` the printed flat regions with ``h >= 3`` put a length-``mu_bar``
    group where it leaves extra violating values: the PMF breaks the ``delta``
    it claims (counter-example in the notes), so the function refuses ``b > 3``
    unless ``unverified=True``.
    """
    b, r = divmod(n, mu_bar)
    if b + r >= mu_bar:
        raise InvalidParameterError("n", n, f"n = b*mu_bar + r with b + r < mu_bar (Theorem 3); "
                                    f"here b = {b}, r = {r}, mu_bar = {mu_bar}")
    if b > 3 and not unverified:
        raise InvalidParameterError("n", n, "n // mu_bar <= 3 (Theorem 3 is wrong for b >= 4, see "
                                    "docs/paper-notes.md; pass unverified=True for the printed form)")
    check_delta(delta, accepted="a number in [0, 1)")
    staircase = _theorem3_printed(n, mu_bar, epsilon, delta, b, r)
    if delta > staircase[0] and (1 - delta) <= n * math.exp(epsilon) * delta:
        return np.concatenate(([delta], np.full(n, (1 - delta) / n)))  # (40)-(41)
    return staircase


def _theorem3_printed(n: int, mu_bar: int, epsilon: float, delta: float, b: int, r: int) -> np.ndarray:
    """Theorem 3's regions as printed, with the (38) length correction."""
    lemma4 = lemma4_bd(n, mu_bar, epsilon)
    if b < 1 or delta <= lemma4[0] * math.exp(-(b - 1) * epsilon):
        return lemma4
    e = math.exp(-epsilon)
    for h in range(1, b):
        for j in range(1, h + 1):
            u = 1 if j != h else 0
            flat = [1] + [mu_bar] * (b - h) + [mu_bar - 1] * h + [r + h - u]
            if u:
                flat[b - h + j + 1] = mu_bar
            phi0 = 1.0 / sum(length * e ** i for i, length in enumerate(flat))  # (34)
            low = phi0 * e ** (b - h) * _xi(j, epsilon)  # (37c)
            high = phi0 * e ** (b - h - 1) if j == h else phi0 * e ** (b - h) * _xi(j + 1, epsilon)  # (37a,b)
            if delta <= low:  # linear region (38)-(39)
                single = b - h + j + 1
                lengths = [1] + [mu_bar] * (b - h) + [mu_bar - 1] * (h + 1) + [r + h - 1]
                lengths[single] = 1
                heights = [delta * e ** (i - (b - h)) / _xi(j, epsilon) if i < single
                           else delta * e ** (i - 1 - (b - h)) / _xi(j, epsilon) for i in range(b + 3)]
                heights[single] = 0.0
                heights[single] = (1 - sum(lg * ht for lg, ht in zip(lengths, heights))) / lengths[single]
                return _groups_to_pmf(lengths, heights)
            if delta <= high:  # flat region (30)
                return _groups_to_pmf(flat, [phi0 * e ** i for i in range(b + 2)])
    return np.concatenate(([delta], np.full(n, (1 - delta) / n)))  # (40)-(41)
