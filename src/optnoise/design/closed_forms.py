"""Closed forms of Kadam et al. 2024 for the error-rate-optimal noise.

All of them are for the *directed* neighbourhoods the paper's proofs use: the
constraints (14c)/(27) are ``f(eta) <= e^eps f(eta + mu)`` for the listed
``mu`` only. Each is checked against the LP/MILP in ``tests/test_design.py``;
:func:`closed_form_delta0` is used as a fast path only for the cases those tests
cover (directed SD and BD, ER, ``delta = 0``).
"""

from __future__ import annotations

import math

import numpy as np

from ..neighbourhood import Neighbourhood


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
