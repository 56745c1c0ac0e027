"""Mechanisms made in Python: additive noise, a channel, a family, the geometric mechanism."""

from __future__ import annotations

from typing import Iterable, Literal, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import Distance, InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF
from ..target import Target
from .core import Mechanism

def make_neighbourhood(*, sensitivity: int | None = None, distances: Iterable[Distance] | None = None,
                       directed: bool = False) -> Neighbourhood:
    """``sensitivity=D`` means ``|Q(X) - Q(X')| <= D`` (BD ``D``); ``distances`` lists ``M``."""
    if sensitivity is not None and distances is not None:
        raise InvalidParameterError("sensitivity", (sensitivity, distances), "sensitivity= or distances=, not both")
    if distances is not None:
        return Neighbourhood(tuple(distances), directed)
    s = 1 if sensitivity is None else sensitivity
    if isinstance(s, bool) or int(s) != s or s < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer >= 1")
    return Neighbourhood.bd(int(s), directed=directed)


def additive(pmf: Sequence[float] | np.ndarray | CyclicPMF | IntegerPMF, *,
             space: Literal["cyclic", "integer"] = "cyclic", offset: int = 0,
             sensitivity: int | None = None, distances: Iterable[Distance] | None = None,
             directed: bool = False, normalize: bool = False, target: Target | None = None,
             name: str = "custom") -> Mechanism:
    """An additive-noise mechanism from a PMF.

    Parameters
    ----------
    pmf:
        Masses (or a ready PMF object). ``space="cyclic"``: ``pmf[eta]`` for
        ``eta`` in ``{0..n}``, added mod ``n + 1``; ``space="integer"``: ``pmf[i]``
        is the mass at ``i - offset``.
    sensitivity, distances, directed:
        The neighbourhood (default: sensitivity 1, symmetric).
    normalize:
        Rescale a rounded table to sum to 1.
    target:
        The target the mechanism is meant to meet (kept exactly by :meth:`Mechanism.quantize`).
    """
    nb = make_neighbourhood(sensitivity=sensitivity, distances=distances, directed=directed)
    if isinstance(pmf, (CyclicPMF, IntegerPMF)):
        obj: CyclicPMF | IntegerPMF = pmf
    elif space == "cyclic":
        obj = CyclicPMF(pmf, normalize=normalize)
    elif space == "integer":
        obj = IntegerPMF(pmf, offset, normalize=normalize)
    else:
        raise InvalidParameterError("space", space, "'cyclic' or 'integer'")
    return Mechanism(obj, nb, target, name)


def channel(matrix: Sequence[Sequence[float]] | np.ndarray | Channel, *,
            pairs: Iterable[tuple[int, int]] | None = None, sensitivity: int | None = None,
            distances: Iterable[Distance] | None = None, directed: bool = False,
            normalize: bool = False, target: Target | None = None, name: str = "channel") -> Mechanism:
    """A mechanism given as a row-stochastic matrix ``P[input, output]``.

    Neighbours are explicit input ``pairs``, or inputs whose indices differ by a
    distance in ``M`` (``sensitivity``/``distances``; no wrap-around).
    """
    ch = matrix if isinstance(matrix, Channel) else Channel(matrix, normalize=normalize)
    if pairs is not None:
        nb: Neighbourhood | InputPairs = InputPairs(tuple(pairs), directed)
    else:
        nb = InputPairs.from_distances(
            make_neighbourhood(sensitivity=sensitivity, distances=distances, directed=directed), ch.n_inputs)
    return Mechanism(ch, nb, target, name)


def from_family(spec: str, neighbourhood: Neighbourhood | InputPairs | None = None, target: Target | None = None, *,
                default: Neighbourhood | InputPairs | None = None, wrap: int | None = None,
                max_memory: int | None = None) -> Mechanism:
    """A family ``NAME:PARAMS`` (``optnoise families``) as a mechanism: the one way a family
    becomes a mechanism (the command line's ``--family``, a table column's ``family``, the
    benchmarks).

    A channel family keeps its own neighbouring pairs (``neighbourhood`` must be ``None``);
    noise, or a plain channel, takes ``neighbourhood`` (else ``default``, else SD 1).
    ``wrap``: noise on the integer line wrapped onto ``{0..wrap-1}`` (a cyclic domain, or
    categories). ``max_memory`` bounds the family's window (:func:`optnoise.families.parse_family`).

    >>> from_family("geometric:0.5").kind, from_family("hamming:1,2,1.0").neighbourhood.describe()
    ('integer', '8 ordered input pairs')
    """
    from ..families import ChannelFamily, parse_family
    from ..families.baselines import wrap as wrap_onto
    _, obj = parse_family(spec, max_memory=max_memory)
    if isinstance(obj, ChannelFamily):
        if neighbourhood is not None:
            raise InvalidParameterError("neighbourhood", "given", "no neighbourhood with a channel family (its "
                                        "neighbours differ in one row)")
        return Mechanism(obj.channel, obj.pairs, target, spec)
    rep = wrap_onto(obj, wrap) if wrap is not None and isinstance(obj, IntegerPMF) else obj
    nb = neighbourhood if neighbourhood is not None else default if default is not None else Neighbourhood((1,))
    return Mechanism(rep, nb, target, spec)


def geometric(*, epsilon: float | None = None, alpha: float | None = None, sensitivity: int = 1) -> Mechanism:
    """The two-sided geometric mechanism on ``Z`` (exact tails).

    Give ``epsilon`` (then ``alpha = e^(-epsilon / sensitivity)`` and the mechanism's
    target is pure ``epsilon``-DP) or ``alpha``.
    """
    from ..families.geometric import alpha_for_epsilon, geometric_pmf
    if (epsilon is None) == (alpha is None):
        raise InvalidParameterError("epsilon", (epsilon, alpha), "exactly one of epsilon= or alpha=")
    a = alpha_for_epsilon(epsilon, sensitivity) if epsilon is not None else float(alpha)  # type: ignore[arg-type]
    target = Target(epsilon) if epsilon is not None else None
    return Mechanism(geometric_pmf(a), make_neighbourhood(sensitivity=sensitivity), target, f"geometric(alpha={a:.6g})")


__all__ = ["additive", "channel", "from_family", "geometric", "make_neighbourhood"]
