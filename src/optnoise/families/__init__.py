"""Built-in noise families, addressable as ``NAME:PARAMS`` (CLI.md, ``optnoise families``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs
from ..pmf import Channel, CyclicPMF, IntegerPMF
from .baselines import discrete_gaussian_pmf
from .geometric import alpha_for_epsilon, geometric_pmf
from .qin import qin_exponential_pmf, qin_gaussian_pmf, qin_laplace_pmf, qin_staircase_pmf, qin_uniform_pmf
from .rr import hamming_channel, hamming_neighbours, rr_pmf
from .staircase import discrete_staircase_pmf


@dataclass(frozen=True)
class ChannelFamily:
    """A channel family's mechanism together with its own neighbouring input pairs."""

    channel: Channel
    pairs: InputPairs
    inputs: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Family:
    """A named family: its parameters, a description and a builder."""

    name: str
    params: str
    space: str
    description: str
    build: Callable[[list[str]], "CyclicPMF | IntegerPMF | ChannelFamily"]
    n_params: tuple[int, int]

    def to_json(self) -> dict:
        return {"name": self.name, "params": self.params, "space": self.space, "description": self.description}


def _floats(name: str, params: list[str]) -> list[float]:
    try:
        return [float(x) for x in params]
    except ValueError as exc:
        raise InvalidParameterError("--family", f"{name}:{','.join(params)}", "numeric parameters") from exc


def _int(name: str, value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise InvalidParameterError("--family", f"{name}: {what}={value}", f"an integer {what}") from exc


FAMILIES: dict[str, Family] = {
    "geometric": Family(
        "geometric", "ALPHA", "integer",
        "two-sided geometric, p(k) proportional to ALPHA^|k| (Ghosh et al. 2009); eps = -ln(ALPHA) per unit of sensitivity",
        lambda ps: geometric_pmf(_floats("geometric", ps)[0]), (1, 1)),
    "discrete-gaussian": Family(
        "discrete-gaussian", "SIGMA[,MU]", "integer",
        "discrete Gaussian (Canonne, Kamath, Steinke 2020), p(k) proportional to exp(-(k-MU)^2 / 2 SIGMA^2)",
        lambda ps: discrete_gaussian_pmf(*_floats("discrete-gaussian", ps)), (1, 2)),
    "rr": Family(
        "rr", "K,P", "cyclic",
        "K-ary randomized response as cyclic noise on {0..K-1}: mass 1-(K-1)P at 0 and P elsewhere",
        lambda ps: rr_pmf(_int("rr", ps[0], "K"), _floats("rr", ps[1:])[0]), (2, 2)),
    "staircase": Family(
        "staircase", "EPS,D,R", "integer",
        "Geng & Viswanath's discrete staircase P_r (82)-(83): eps-DP for sensitivity D, 1 <= R <= D",
        lambda ps: discrete_staircase_pmf(_floats("staircase", ps[:1])[0], _int("staircase", ps[1], "D"),
                                          _int("staircase", ps[2], "R")), (3, 3)),
    "qin-gaussian": Family(
        "qin-gaussian", "SIGMA[,MU]", "integer",
        "Qin et al. (13): Gaussian discretised by (2), p(k) = Phi((k+1-MU)/SIGMA) - Phi((k-MU)/SIGMA)",
        lambda ps: qin_gaussian_pmf(*_floats("qin-gaussian", ps)), (1, 2)),
    "qin-laplace": Family(
        "qin-laplace", "LAMBDA[,MU]", "integer",
        "Qin et al.: Laplace with scale LAMBDA discretised by (2) (exact geometric tails)",
        lambda ps: qin_laplace_pmf(*_floats("qin-laplace", ps)), (1, 2)),
    "qin-staircase": Family(
        "qin-staircase", "A,RHO", "integer",
        "Qin et al. (20): stairs of width A, mass (1-RHO)/(2A) RHO^j on [jA, (j+1)A) and its mirror",
        lambda ps: qin_staircase_pmf(_int("qin-staircase", ps[0], "A"), _floats("qin-staircase", ps[1:])[0]), (2, 2)),
    "qin-uniform": Family(
        "qin-uniform", "A,B", "integer",
        "Qin et al. (22): uniform on the integers A..B",
        lambda ps: qin_uniform_pmf(_int("qin-uniform", ps[0], "A"), _int("qin-uniform", ps[1], "B")), (2, 2)),
    "qin-exponential": Family(
        "qin-exponential", "ETA", "integer",
        "Qin et al. (23) normalised over k = 1, 2, ...: (1 - e^-ETA) e^(-ETA (k-1)) (as printed it sums to ETA/(e^ETA - 1))",
        lambda ps: qin_exponential_pmf(_floats("qin-exponential", ps)[0]), (1, 1)),
    "hamming": Family(
        "hamming", "M,N,K", "channel",
        "Holohan et al.'s exponential mechanism on D^N, |D| = M+1, P(x|d) proportional to exp(-K H(x, d)); "
        "neighbours differ in one row (the neighbourhood flags do not apply)",
        lambda ps: _hamming(ps), (3, 3)),
}


def _hamming(ps: list[str]) -> ChannelFamily:
    m, n = _int("hamming", ps[0], "M"), _int("hamming", ps[1], "N")
    k = _floats("hamming", ps[2:])[0]
    if m < 1 or n < 1 or (m + 1) ** n > 4096:
        raise InvalidParameterError("--family", f"hamming:{','.join(ps)}", "M >= 1, N >= 1 and (M+1)^N <= 4096 databases")
    if not k >= 0:
        raise InvalidParameterError("--family", f"hamming:{','.join(ps)}", "K >= 0")
    matrix, dbs = hamming_channel(m, n, k)
    return ChannelFamily(Channel(matrix), InputPairs(tuple(hamming_neighbours(dbs)), directed=True), tuple(dbs))


def parse_family(spec: str) -> tuple[Family, "CyclicPMF | IntegerPMF | ChannelFamily"]:
    """Build the PMF of a ``NAME:PARAMS`` specification."""
    name, _, rest = spec.partition(":")
    fam = FAMILIES.get(name.strip())
    if fam is None:
        raise InvalidParameterError("--family", spec, "one of " + ", ".join(f"{f.name}:{f.params}" for f in FAMILIES.values()))
    params = [p.strip() for p in rest.split(",")] if rest.strip() else []
    lo, hi = fam.n_params
    if not lo <= len(params) <= hi:
        raise InvalidParameterError("--family", spec, f"{fam.name}:{fam.params}")
    return fam, fam.build(params)


__all__ = ["ChannelFamily", "FAMILIES", "Family", "alpha_for_epsilon", "geometric_pmf", "parse_family", "rr_pmf"]
