"""Mechanism objects: a noise PMF (or channel) together with its neighbourhood.

The public face of the analysis::

    >>> import optnoise
    >>> mech = optnoise.additive([0.6, 0.2, 0.2], sensitivity=1)   # cyclic {0,1,2}
    >>> round(mech.privacy.epsilon_pure, 6)
    1.098612
    >>> g = optnoise.geometric(epsilon=1.0)
    >>> round(g.privacy.delta_dp(0.5), 6)
    0.287649

Keyword names follow other DP libraries: ``epsilon=``, ``delta=``, ``sensitivity=``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Literal, Sequence

import numpy as np

from .analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
from .errors import InvalidParameterError
from .families import alpha_for_epsilon, geometric_pmf
from .neighbourhood import Distance, InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, IntegerPMF


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A mechanism under a neighbourhood, with its exact privacy.

    Attributes
    ----------
    pmf:
        The noise PMF (:class:`CyclicPMF`, :class:`IntegerPMF`) or a :class:`Channel`.
    neighbourhood:
        Query distances (additive noise) or input pairs (channels).
    name:
        A label for reports.
    """

    pmf: CyclicPMF | IntegerPMF | Channel
    neighbourhood: Neighbourhood | InputPairs
    name: str = "custom"

    @cached_property
    def privacy(self) -> PrivacyProfile:
        """Tight privacy profile (float mode); see :meth:`certify` for exact values."""
        return privacy_profile(self.pmf, self.neighbourhood)

    def certify(self) -> PrivacyProfile:
        """Exact profile: rational arithmetic, every value rounded outward."""
        return privacy_profile(self.pmf, self.neighbourhood, exact=True)

    def verify(self, *, epsilon: float | None = None, delta: float | None = None,
               exact: bool = False) -> Guarantee:
        """``epsilon_pure``, ``delta_dp``/``delta_pdp`` at ``epsilon``, ``epsilon_dp``/``epsilon_pdp`` at ``delta``."""
        return guarantee(self.certify() if exact else self.privacy, epsilon, delta)

    def compose(self, k: int, *, epsilon: float | None = None, delta: float | None = None):
        """Guarantee after ``k`` releases (dp_accounting PLDs); see :func:`optnoise.accounting.compose`."""
        from .accounting import compose
        return compose(self.privacy, k, epsilon=epsilon, delta=delta)


def make_neighbourhood(*, sensitivity: int | None = None, distances: Iterable[Distance] | None = None,
                       directed: bool = False) -> Neighbourhood:
    """``sensitivity=D`` means ``|Q(X) - Q(X')| <= D`` (BD ``D``); ``distances`` lists ``M``."""
    if sensitivity is not None and distances is not None:
        raise InvalidParameterError("sensitivity/distances", (sensitivity, distances), "one of them, not both")
    if distances is not None:
        return Neighbourhood(tuple(distances), directed)
    s = 1 if sensitivity is None else sensitivity
    if int(s) != s or s < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer >= 1")
    return Neighbourhood.bd(int(s), directed=directed)


def additive(pmf: Sequence[float] | np.ndarray | CyclicPMF | IntegerPMF, *,
             space: Literal["cyclic", "integer"] = "cyclic", offset: int = 0,
             sensitivity: int | None = None, distances: Iterable[Distance] | None = None,
             directed: bool = False, normalize: bool = False, name: str = "custom") -> Mechanism:
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
    """
    nb = make_neighbourhood(sensitivity=sensitivity, distances=distances, directed=directed)
    if isinstance(pmf, (CyclicPMF, IntegerPMF)):
        obj = pmf
    elif space == "cyclic":
        obj = CyclicPMF(pmf, normalize=normalize)
    elif space == "integer":
        obj = IntegerPMF(pmf, offset, normalize=normalize)
    else:
        raise InvalidParameterError("space", space, "'cyclic' or 'integer'")
    return Mechanism(obj, nb, name)


def channel(matrix: Sequence[Sequence[float]] | np.ndarray | Channel, *,
            pairs: Iterable[tuple[int, int]] | None = None, sensitivity: int | None = None,
            distances: Iterable[Distance] | None = None, directed: bool = False,
            normalize: bool = False, name: str = "channel") -> Mechanism:
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
    return Mechanism(ch, nb, name)


def geometric(*, epsilon: float | None = None, alpha: float | None = None, sensitivity: int = 1) -> Mechanism:
    """The two-sided geometric mechanism on ``Z`` (exact tails).

    Give ``epsilon`` (then ``alpha = e^(-epsilon / sensitivity)``) or ``alpha``.
    """
    if (epsilon is None) == (alpha is None):
        raise InvalidParameterError("epsilon/alpha", (epsilon, alpha), "exactly one of epsilon= or alpha=")
    a = alpha_for_epsilon(epsilon, sensitivity) if epsilon is not None else float(alpha)  # type: ignore[arg-type]
    return Mechanism(geometric_pmf(a), make_neighbourhood(sensitivity=sensitivity), f"geometric(alpha={a:.6g})")
