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
        for t in range(reps):
            idx = (start + sign * (np.arange(period) + t * period)) % size
            np.add.at(out, idx, block * ratio ** t * scale)
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


__all__ = ["BOUNDARIES", "clamp_channel", "data_independent_pmf", "discrete_gaussian_pmf",
           "exponential_channel", "on_domain", "truncate_channel", "wrap"]
