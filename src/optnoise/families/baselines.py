"""Baseline mechanisms of Kadam et al.'s comparisons, on the finite domain ``{0..n}``.

Each infinite-support noise is used on ``{0..n}`` in one of three ways
(``boundary``):

* ``modulo``: the noise wrapped onto the cycle (the PMF of ``eta mod (n+1)``); the
  mechanism is additive and cyclic, ``(q + eta) mod (n + 1)``;
* ``clamp``: the released value ``q + eta`` projected onto ``[0, n]`` (Kadam (56)).
  Clamping *is* post-processing of the integer-line mechanism, so it can only
  improve its guarantee; its channel is analysed exactly;
* ``truncate``: the noise truncated to ``[-q, n - q]`` and renormalised *per input*
  ``q``. This is **not** post-processing: the renormalisation depends on ``q``, and
  the channel's guarantee can be worse than the untruncated noise's.

The exponential mechanism with utility ``-|q - k|`` (Gumbel-max realisation) and the
data-independent mechanism (K-ary randomized response in additive form) are
defined on ``{0..n}`` directly.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidParameterError
from ..pmf import Channel, CyclicPMF, IntegerPMF

BOUNDARIES = ("modulo", "clamp", "truncate")


def discrete_gaussian_pmf(sigma: float, mu: float = 0.0, *, tail_sigmas: float = 40.0) -> IntegerPMF:
    """Canonne-Kamath-Steinke discrete Gaussian ``∝ exp(-(k - mu)^2 / 2 sigma^2)`` on Z.

    Masses beyond ``mu ± tail_sigmas sigma`` are below ``exp(-800)`` (under the float
    range) and are dropped; the window is normalised with the exact theta-sum over it.
    """
    if not sigma > 0:
        raise InvalidParameterError("sigma", sigma, "a number > 0")
    half = int(math.ceil(tail_sigmas * sigma + abs(mu))) + 1
    k = np.arange(-half, half + 1)
    logw = -((k - mu) ** 2) / (2.0 * sigma * sigma)
    w = np.exp(logw - logw.max())
    return IntegerPMF(w / w.sum(), offset=half)


def _log_theta_ratio(c: float, sigma: float) -> float:
    """``log(Z(c) / Z(0))`` with ``Z(c) = sum_{k in Z} exp(-(k + c)^2 / (2 sigma^2))``.

    ``Z`` is even and 1-periodic. For ``sigma >= 1`` by Poisson summation,
    ``Z(c) = sigma sqrt(2 pi) sum_m exp(-2 pi^2 sigma^2 m^2) cos(2 pi m c)`` (a handful of
    terms; ``log1p`` keeps the tiny differences); for ``sigma < 1`` by the direct sum in
    log-sum-exp form (terms with ``|k + c| > 40 sigma + 2`` are below ``e^-800`` of the largest).
    """
    c = c - math.floor(c)
    if sigma >= 1.0:
        m = np.arange(1, int(math.ceil(6.5 / sigma)) + 2)
        w = np.exp(-2.0 * math.pi ** 2 * sigma ** 2 * m ** 2)
        return math.log1p(2.0 * float(np.sum(w * np.cos(2.0 * math.pi * m * c)))) - math.log1p(2.0 * float(np.sum(w)))
    k = np.arange(-int(math.ceil(40.0 * sigma)) - 2, int(math.ceil(40.0 * sigma)) + 3)

    def log_z(x: float) -> float:
        z = -((k + x) ** 2) / (2.0 * sigma * sigma)
        top = float(z.max())
        return top + math.log(float(np.sum(np.exp(z - top))))
    return log_z(c) - log_z(0.0)


def discrete_gaussian_divergence(sigma: float, shift: int, alpha: float) -> float:
    """Order-``alpha`` Rényi divergence of the discrete Gaussian on Z from its shift by ``shift``.

    Canonne, Kamath & Steinke 2020 (proof of their Prop. 5, by completing the square):
    for ``p ∝ exp(-k^2 / 2 sigma^2)`` and ``p'(k) = p(k + D)``,
    ``sum_k p^alpha p'^(1 - alpha) = exp(alpha (alpha - 1) D^2 / 2 sigma^2) Z((alpha - 1) D) / Z(0)``, so::

        D_alpha = alpha D^2 / (2 sigma^2) + log(Z((alpha - 1) D) / Z(0)) / (alpha - 1)

    with ``Z`` the theta sum of :func:`_log_theta_ratio`. ``Z(c) <= Z(0)`` with equality at
    integer ``c``: the divergence is exactly ``alpha D^2 / (2 sigma^2)`` when
    ``(alpha - 1) D`` is an integer (integer orders) and smaller otherwise. ``alpha = 1`` is
    the KL divergence ``D^2 / (2 sigma^2)`` (the mean of the loss ``(2 k D + D^2) / 2 sigma^2``);
    ``alpha = inf`` is ``inf`` (the loss is unbounded). Orders in ``(0, 1)`` use the same
    formula. This is the mechanism on all of Z, not a truncated window.
    """
    if not sigma > 0:
        raise InvalidParameterError("sigma", sigma, "a number > 0")
    d = abs(int(shift))
    a = float(alpha)
    if not a > 0:
        raise InvalidParameterError("alpha", alpha, "a Rényi order > 0 (inf allowed)")
    if d == 0:
        return 0.0
    base = d * d / (2.0 * sigma * sigma)
    if a == math.inf:
        return math.inf
    if a == 1.0:
        return base
    return max(0.0, a * base + _log_theta_ratio((a - 1.0) * d, sigma) / (a - 1.0))


def _explicit(pmf: IntegerPMF, n: int) -> tuple[int, int, np.ndarray]:
    """Window covering the PMF's own window and ``[-(n+1), n+1]``, with its masses."""
    lo, hi = min(pmf.lo, -(n + 1)), max(pmf.hi, n + 1)
    return lo, hi, pmf.window(lo, hi)


def _tail_blocks(pmf: IntegerPMF, lo: int, hi: int):
    """For each tail beyond ``[lo, hi]``: (first integer, direction, block masses, ratio per block)."""
    out = []
    for tail, start, sign in ((pmf.right_tail, hi + 1, 1), (pmf.left_tail, lo - 1, -1)):
        if tail is not None:
            block = pmf.mass(start + sign * np.arange(tail.period))
            out.append((start, sign, block, tail.ratio))
    return out


def wrap(pmf: IntegerPMF, size: int) -> CyclicPMF:
    """The PMF of ``eta mod size``; geometric tails summed in closed form per residue."""
    lo, hi, m = _explicit(pmf, size)
    out = np.zeros(size)
    np.add.at(out, np.arange(lo, hi + 1) % size, m)
    for start, sign, block, ratio in _tail_blocks(pmf, lo, hi):
        period = block.size
        reps = size // math.gcd(size, period)  # blocks until the residues repeat
        scale = 1.0 / (1.0 - ratio ** reps)
        t = np.arange(reps)[:, None]   # every block at once, in the order of one block after another
        idx = (start + sign * (np.arange(period)[None, :] + t * period)) % size
        with np.errstate(under="ignore"):
            np.add.at(out, idx.ravel(), (block[None, :] * (ratio ** t * scale)).ravel())
    return CyclicPMF(out / out.sum())


def clamp_channel(pmf: IntegerPMF, n: int) -> Channel:
    """``P[q, y] = P(clamp(q + eta, 0, n) = y)`` (Kadam (56)): post-processing of the line mechanism."""
    lo, hi, m = _explicit(pmf, n)
    ks = np.arange(lo, hi + 1)
    beyond = {sign: block.sum() / (1.0 - ratio) for _, sign, block, ratio in _tail_blocks(pmf, lo, hi)}
    rows = np.zeros((n + 1, n + 1))
    for q in range(n + 1):
        np.add.at(rows[q], np.clip(q + ks, 0, n), m)
        rows[q, n] += beyond.get(1, 0.0)
        rows[q, 0] += beyond.get(-1, 0.0)
    return Channel(rows / rows.sum(axis=1, keepdims=True))


def truncate_channel(pmf: IntegerPMF, n: int) -> Channel:
    """Noise truncated to ``[-q, n - q]`` and renormalised per input (not post-processing)."""
    m = np.array([pmf.window(-q, n - q) for q in range(n + 1)])
    return Channel(m / m.sum(axis=1, keepdims=True))


def on_domain(pmf: IntegerPMF, n: int, boundary: str) -> CyclicPMF | Channel:
    """An integer-line noise used on ``{0..n}`` with the given ``boundary``."""
    if boundary == "modulo":
        return wrap(pmf, n + 1)
    if boundary == "clamp":
        return clamp_channel(pmf, n)
    if boundary == "truncate":
        return truncate_channel(pmf, n)
    raise InvalidParameterError("boundary", boundary, "modulo, clamp or truncate")


def exponential_channel(n: int, beta: float) -> Channel:
    """Exponential mechanism on ``{0..n}`` with utility ``-|q - k|``: ``P(k | q) ∝ exp(-beta |q - k|)``.

    ``beta = eps / (2 Delta_u)`` is McSherry-Talwar's calibration; Gumbel-max
    (``argmax_k -beta|q-k| + G_k``) samples exactly this channel (Kadam footnote 6).
    """
    if not beta >= 0:
        raise InvalidParameterError("beta", beta, "a number >= 0")
    k = np.arange(n + 1)
    w = np.exp(-beta * np.abs(k[:, None] - k[None, :]))
    return Channel(w / w.sum(axis=1, keepdims=True))


def data_independent_pmf(n: int, rho: float) -> CyclicPMF:
    """Kadam's data-independent mechanism: ``f(0) = 1 - rho``, ``f(eta) = rho / n``."""
    if not 0 <= rho <= 1:
        raise InvalidParameterError("rho", rho, "a number in [0, 1]")
    probs = np.full(n + 1, rho / n)
    probs[0] = 1.0 - rho
    return CyclicPMF(probs)


__all__ = ["BOUNDARIES", "clamp_channel", "data_independent_pmf", "discrete_gaussian_divergence", "discrete_gaussian_pmf",
           "exponential_channel", "on_domain", "truncate_channel", "wrap"]
