"""Built-in noise families, addressable as ``NAME:PARAMS`` (CLI.md, ``optnoise families``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidParameterError
from ..pmf import CyclicPMF, IntegerPMF
from .geometric import alpha_for_epsilon, geometric_pmf
from .baselines import discrete_gaussian_pmf
from .rr import rr_pmf


@dataclass(frozen=True)
class Family:
    """A named family: its parameters, a description and a builder."""

    name: str
    params: str
    space: str
    description: str
    build: Callable[[list[str]], CyclicPMF | IntegerPMF]
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
}


def parse_family(spec: str) -> tuple[Family, CyclicPMF | IntegerPMF]:
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


__all__ = ["FAMILIES", "Family", "alpha_for_epsilon", "geometric_pmf", "parse_family", "rr_pmf"]
