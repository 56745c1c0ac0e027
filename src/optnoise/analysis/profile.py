"""The privacy profile of a mechanism: maxima over its ordered neighbouring pairs.

:func:`privacy_profile` gets the pairs from the one builder (:mod:`optnoise.analysis.pairs`)
and analyses them in floating point (:mod:`optnoise.analysis.floating`) or exactly. Which
engine computes the maxima depends on the size, never the values (each is tested against
the plain one):

* float, a large one-dimensional cyclic PMF: :mod:`~optnoise.analysis.streaming` walks the
  pairs as aligned views of the PMF, O(n) memory whatever the number of pairs;
* exact, masses with a common denominator (:func:`~optnoise.analysis.pairs.integer_form`):
  :mod:`~optnoise.analysis.exact_fast`, integer weights compared vectorised, one pair at a
  time; otherwise :class:`~optnoise.analysis.exact.ExactPair` on Fractions (the oracle);
* otherwise :class:`~optnoise.analysis.floating.FloatPair` per pair.

:meth:`PrivacyProfile.meets` is the one rule for "meets a target" in the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF
from ..target import Notion, Target, check_delta, check_epsilon, check_notion
from .floating import FloatPair, LossDistribution, PairAnalysis, PairMaxima
from .pairs import (IntegerForm, PairMasses, default_neighbourhood, integer_form, integer_form_fits, lazy_map,
                    pair_builders)

#: Cells over all pairs (n times the number of pairs) from which a float cyclic profile
#: streams its pairs and an exact profile builds each pair when it is used.
STREAM_CELLS = 1 << 18
#: Called with ``(epsilon, delta)`` (either may be ``None``): the maxima over all pairs.
Summarizer = Callable[[float | None, float | None], PairMaxima]


@dataclass(frozen=True, eq=False)
class LazyPair:
    """A pair that is built each time it is used and never kept (O(n) memory for a
    profile whatever the number of pairs); it answers like the pair it builds."""

    label: str
    build: Callable[[], PairAnalysis]

    @property
    def epsilon_pure(self) -> float:
        return self.build().epsilon_pure

    def delta_dp(self, epsilon: float) -> float:
        return self.build().delta_dp(epsilon)

    def delta_pdp(self, epsilon: float) -> float:
        return self.build().delta_pdp(epsilon)

    def epsilon_dp(self, delta: float) -> float:
        return self.build().epsilon_dp(delta)

    def epsilon_pdp(self, delta: float) -> float:
        return self.build().epsilon_pdp(delta)

    def loss_distribution(self) -> LossDistribution:
        return self.build().loss_distribution()


@dataclass(frozen=True, eq=False)
class PrivacyProfile:
    """The privacy of a mechanism: maxima over its ordered neighbouring pairs.

    Methods take and return floats; ``math.inf`` means "no finite value". ``exact``
    profiles round every value outward (never optimistic). ``summarize``, when given,
    computes the maxima over all pairs in one walk (a streamed engine); the ``pairs``
    are then usually :class:`LazyPair` objects, still there for loss distributions.
    """

    pairs: tuple[PairAnalysis, ...]
    neighbourhood: Neighbourhood | InputPairs | None = None
    exact: bool = False
    space: str = "cyclic"
    summarize: Summarizer | None = field(default=None, repr=False)
    _values: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.pairs:
            raise InvalidParameterError("neighbourhood", self.neighbourhood, "at least one neighbouring pair")

    def values(self, epsilon: float | None = None, delta: float | None = None) -> PairMaxima:
        """All values at once: ``epsilon_pure``, the deltas at ``epsilon`` and the epsilons
        at ``delta`` (``None`` where not asked), with the label of a pair attaining each."""
        eps = None if epsilon is None else check_epsilon(epsilon, allow_inf=True)
        d = None if delta is None else check_delta(delta)
        key = (eps, d)
        if key not in self._values:
            self._values[key] = self.summarize(eps, d) if self.summarize is not None else self._from_pairs(eps, d)
        return self._values[key]

    def _from_pairs(self, eps: float | None, d: float | None) -> PairMaxima:
        def top(fn: Callable[[PairAnalysis], float]) -> tuple[float, str]:
            best = max(self.pairs, key=fn)
            return fn(best), best.label

        found = {"epsilon_pure": top(lambda pr: pr.epsilon_pure)}
        if eps is not None:
            found["delta_dp"] = top(lambda pr: pr.delta_dp(eps))
            found["delta_pdp"] = top(lambda pr: pr.delta_pdp(eps))
        if d is not None:
            found["epsilon_dp"] = top(lambda pr: pr.epsilon_dp(d))
            found["epsilon_pdp"] = top(lambda pr: pr.epsilon_pdp(d))
        return PairMaxima(**{k: v for k, (v, _) in found.items()}, pairs=len(self.pairs),
                          worst={k: label for k, (_, label) in found.items()})

    @cached_property
    def epsilon_pure(self) -> float:
        """Tight pure epsilon (Qin et al. Theorem 1); ``inf`` if none is finite."""
        if self.summarize is not None:   # every summary carries it: reuse one already made
            return next(iter(self._values.values()), None).epsilon_pure if self._values \
                else self.values().epsilon_pure
        return max(pr.epsilon_pure for pr in self.pairs)

    def delta_dp(self, epsilon: float) -> float:
        """Tight ``delta`` of approximate DP at ``epsilon`` (hockey-stick maximum)."""
        eps = check_epsilon(epsilon, allow_inf=True)
        if self.summarize is not None:
            return self.values(eps).delta_dp  # type: ignore[return-value]
        return max(pr.delta_dp(eps) for pr in self.pairs)

    def delta_pdp(self, epsilon: float) -> float:
        """Tight ``delta`` of probabilistic DP at ``epsilon`` (Kadam Def. 2)."""
        eps = check_epsilon(epsilon, allow_inf=True)
        if self.summarize is not None:
            return self.values(eps).delta_pdp  # type: ignore[return-value]
        return max(pr.delta_pdp(eps) for pr in self.pairs)

    def delta(self, epsilon: float, notion: Notion = "dp") -> float:
        """``delta_DP`` or ``delta_PDP`` at ``epsilon``."""
        return self.delta_dp(epsilon) if check_notion(notion) == "dp" else self.delta_pdp(epsilon)

    def epsilon_dp(self, delta: float) -> float:
        """Smallest ``epsilon`` with ``delta_DP(epsilon) <= delta``."""
        d = check_delta(delta)
        if self.summarize is not None:
            return self.values(delta=d).epsilon_dp  # type: ignore[return-value]
        return max(pr.epsilon_dp(d) for pr in self.pairs)

    def epsilon_pdp(self, delta: float) -> float:
        """Smallest ``epsilon`` with ``delta_PDP(epsilon) <= delta``."""
        d = check_delta(delta)
        if self.summarize is not None:
            return self.values(delta=d).epsilon_pdp  # type: ignore[return-value]
        return max(pr.epsilon_pdp(d) for pr in self.pairs)

    def epsilon(self, delta: float, notion: Notion = "dp") -> float:
        """``epsilon_DP`` or ``epsilon_PDP`` at ``delta``."""
        return self.epsilon_dp(delta) if check_notion(notion) == "dp" else self.epsilon_pdp(delta)

    def meets(self, target: Target) -> bool:
        """Whether the mechanism guarantees ``target``: the one rule of the library.

        Pure targets (``delta = 0``) need ``epsilon_pure <= epsilon``; otherwise the delta
        of the target's notion at its epsilon must be ``<= delta``; an attack target is
        checked on the trade-off curve of the same pairs (:meth:`TradeOff.meets
        <optnoise.analysis.tradeoff.TradeOff.meets>`: exact when the profile is). A float profile is
        allowed a relative :data:`~optnoise.target.MEETS_TOLERANCE` (1e-12) on that
        comparison, for round-off in designs that meet a constraint with equality; an
        exact profile meets with no tolerance (its values are already rounded outward).

        >>> from optnoise import CyclicPMF, Neighbourhood, Target, privacy_profile
        >>> prof = privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1))
        >>> prof.meets(Target(0.7)), prof.meets(Target(0.6)), prof.meets(Target(0.6, 0.05))
        (True, False, True)
        """
        if not isinstance(target, Target):
            raise InvalidParameterError("target", target, "a Target(epsilon, delta, notion)")
        if target.notion == "attack":  # on the trade-off curve of the same pairs
            from .tradeoff import tradeoff_of
            return tradeoff_of(self).meets(target)
        delta = None if target.pure else self.delta(target.epsilon, target.notion)  # type: ignore[arg-type]
        return target.admits(self.epsilon_pure, delta, exact=self.exact)

    def worst_pair(self, epsilon: float, notion: Notion = "dp") -> str:
        """Label of the pair attaining ``delta(epsilon)``."""
        eps = check_epsilon(epsilon, allow_inf=True)
        done = next((v for (e, _), v in self._values.items() if e == eps), None)  # evaluated already
        return (done or self.values(eps)).worst["delta_dp" if check_notion(notion) == "dp" else "delta_pdp"]

    def curve(self, epsilons: Iterable[float] | None = None, notion: Notion = "dp") -> tuple[np.ndarray, np.ndarray]:
        """``(epsilons, deltas)`` for plotting the privacy profile."""
        if epsilons is None:
            top = self.epsilon_pure if math.isfinite(self.epsilon_pure) else 10.0
            epsilons = np.linspace(0.0, max(top * 1.1, 1e-3), 200)
        eps = np.asarray(list(epsilons), dtype=float)
        return eps, np.array([self.delta(e, notion) for e in eps])


def privacy_profile(mechanism: CyclicPMF | IntegerPMF | Channel,
                    neighbourhood: Neighbourhood | InputPairs | None = None, *,
                    exact: bool = False, max_memory: int | None = None) -> PrivacyProfile:
    """The :class:`PrivacyProfile` of a mechanism under a neighbourhood.

    Parameters
    ----------
    mechanism:
        A cyclic PMF (noise mod ``n + 1``), a PMF on the integer line or a channel.
    neighbourhood:
        Query distances for additive noise (default: SD 1, symmetric); input pairs
        for a channel (a :class:`Neighbourhood` is turned into pairs with
        ``q - q'`` in ``M``, without wrap-around).
    exact:
        Rational arithmetic with outward rounding. Masses are the mechanism's exact
        twin when it has one (integer weights, exact decimals), otherwise the exact
        binary value of each float; tail ratios are exact binary values too.
    max_memory:
        Bytes the analysis may plan to use (:mod:`optnoise.resources`; default half the
        machine's memory): larger analyses are refused before anything is built.

    >>> from optnoise import CyclicPMF, Neighbourhood
    >>> round(privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1)).epsilon_pure, 6)
    0.693147
    """
    space = {CyclicPMF: "cyclic", IntegerPMF: "integer", Channel: "channel"}.get(type(mechanism))
    if space is None:
        raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")
    if exact:
        form = integer_form(mechanism)
        if form is not None and integer_form_fits(form, default_neighbourhood(mechanism, neighbourhood)):
            # integer weights, one pair at a time: the float-sized check suffices
            pair_builders(mechanism, neighbourhood, max_memory=max_memory)
            return exact_profile(form, neighbourhood, space=space)
        from .exact import ExactPair  # local import: mpmath is needed only here
        builders, nb = pair_builders(mechanism, neighbourhood, exact=True, max_memory=max_memory)
        return PrivacyProfile(tuple(ExactPair(pm.p, pm.q, pm.label) for pm in (b() for _, b in builders)), nb,
                              exact=True, space=space)
    builders, nb = pair_builders(mechanism, neighbourhood, max_memory=max_memory)
    if isinstance(mechanism, Channel) and len(builders) * mechanism.n_outputs >= STREAM_CELLS \
            and isinstance(nb, InputPairs) and nb.covers_all(mechanism.n_inputs):
        from .sparse_complete import float_sparse_summary
        pairs = lazy_map(builders, lambda label, b: LazyPair(label, lambda: _float_pair(b())))
        columns = _column_pair(mechanism.matrix, FloatPair)
        by_column: Summarizer = lambda eps, d: PrivacyProfile((columns,), nb).values(eps, d)  # noqa: E731
        every = float_sparse_summary(mechanism.matrix, lambda: _pure_of(by_column))
        if every is None:   # rows with many outputs: pair by pair
            every = lambda eps, d: PrivacyProfile(pairs, nb)._from_pairs(eps, d)  # noqa: E731
        return PrivacyProfile(pairs, nb, space="channel", summarize=complete_summary(len(pairs), by_column, every))
    if isinstance(mechanism, IntegerPMF) and mechanism.finite_support and mechanism.probs.ndim == 1 \
            and mechanism.probs.size * len(builders) >= STREAM_CELLS:
        return _streamed_line_profile(mechanism, nb, builders)  # type: ignore[arg-type]
    if isinstance(mechanism, CyclicPMF) and mechanism.probs.ndim == 1 \
            and mechanism.size * len(builders) >= STREAM_CELLS:
        return _streamed_profile(mechanism, nb, builders)  # type: ignore[arg-type]
    return PrivacyProfile(tuple(_float_pair(b()) for _, b in builders), nb, space=space)


def _float_pair(pm: PairMasses) -> FloatPair:
    return FloatPair(pm.p, pm.q, pm.label)


def _streamed_profile(pmf: CyclicPMF, nb: Neighbourhood, builders) -> PrivacyProfile:
    from .streaming import cyclic_summary
    shifts = [s[0] for s in nb.cyclic_shifts(pmf.shape)]
    pairs = tuple(LazyPair(label, lambda b=b: _float_pair(b())) for label, b in builders)
    return PrivacyProfile(pairs, nb, space="cyclic",
                          summarize=lambda eps, delta: cyclic_summary(pmf.probs, shifts, epsilon=eps, delta=delta))


def _streamed_line_profile(pmf: IntegerPMF, nb: Neighbourhood, builders) -> PrivacyProfile:
    """Noise on Z with finite support (no tails), streamed as cyclic noise.

    Why it is the same profile: the pair of a shift ``mu`` is ``(p(k), p(k + mu))`` over the
    integers, zero outside the window; padding the window with ``M = max |mu|`` zeros on each
    side gives a cyclic PMF of length ``W + 2M`` whose rotation by ``mu`` (``mu mod (W + 2M)``)
    lines up the same masses and moves no mass across the ends (``|mu| <= M``), so every
    cell of the cyclic pair is a cell of the integer pair or zero in both. The streamed
    summary (:func:`~optnoise.analysis.streaming.cyclic_summary`) then walks the pairs as
    aligned views, O(W) memory and no pair built; labels are mapped back to ``mu``."""
    from .streaming import cyclic_summary
    mus = [int(m) for m in nb.integer_shifts()]
    reach = max(abs(m) for m in mus)
    padded = np.concatenate([np.zeros(reach), np.asarray(pmf.probs, dtype=np.float64), np.zeros(reach)])
    size = padded.size
    back = {f"mu={m % size}": f"mu={m}" for m in mus}
    pairs = tuple(LazyPair(label, lambda b=b: _float_pair(b())) for label, b in builders)

    def summarize(eps: float | None, delta: float | None) -> PairMaxima:
        got = cyclic_summary(padded, [m % size for m in mus], epsilon=eps, delta=delta)
        return PairMaxima(got.epsilon_pure, got.delta_dp, got.delta_pdp, got.epsilon_dp, got.epsilon_pdp,
                          pairs=got.pairs, worst={k: back.get(v, v) for k, v in got.worst.items()})
    return PrivacyProfile(pairs, nb, space="integer", summarize=summarize)


def exact_profile(form: IntegerForm, neighbourhood: Neighbourhood | InputPairs | None = None, *,
                  space: str | None = None) -> PrivacyProfile:
    """The exact profile of masses given as integer weights over one denominator.

    Equal, value for value, to the Fraction analysis of the same masses
    (:class:`~optnoise.analysis.exact.ExactPair`), computed vectorised by
    :mod:`~optnoise.analysis.exact_fast`; pairs are visited one at a time (each pair is
    built when used once the mechanism is large, so memory stays O(n)).
    """
    from .exact_fast import IntegerPair, certify_pairs
    from .sparse_complete import sparse_summary

    def concrete(pm: PairMasses) -> IntegerPair:
        return IntegerPair.from_weights(pm.p, pm.q, pm.denominator, pm.label)  # type: ignore[arg-type]

    builders, nb = pair_builders(form, neighbourhood)
    cells = int(np.prod(form.shape)) * len(builders)
    if cells >= STREAM_CELLS and form.kind == "channel" and isinstance(nb, InputPairs) \
            and nb.covers_all(form.shape[0]):
        columns = _column_pair(form.weights, lambda p, q, label: IntegerPair.from_weights(p, q, form.denominator,
                                                                                         label))
        lazy = lazy_map(builders, lambda label, b: LazyPair(label, lambda: concrete(b())))
        by_column: Summarizer = lambda eps, d: certify_pairs([columns], epsilon=eps, delta=d)  # type: ignore[list-item]  # noqa: E731
        every: Summarizer | None = sparse_summary(form.weights, form.denominator, lambda: _pure_of(by_column))
        if every is None:   # rows with many outputs: pair by pair
            every = lambda eps, d: certify_pairs((concrete(b()) for _, b in builders), epsilon=eps, delta=d)  # noqa: E731
        return PrivacyProfile(lazy, nb, exact=True, space="channel", summarize=complete_summary(
            len(lazy), by_column, every))
    if cells >= STREAM_CELLS:
        pairs: tuple[PairAnalysis, ...] = tuple(LazyPair(label, lambda b=b: concrete(b())) for label, b in builders)

        def summarize(eps: float | None, delta: float | None) -> PairMaxima:
            return certify_pairs((concrete(b()) for _, b in builders), epsilon=eps, delta=delta)
    else:
        pairs = tuple(concrete(b()) for _, b in builders)

        def summarize(eps: float | None, delta: float | None) -> PairMaxima:
            return certify_pairs(pairs, epsilon=eps, delta=delta)  # type: ignore[arg-type]
    return PrivacyProfile(pairs, nb, exact=True, space=space or form.kind, summarize=summarize)


def _pure_of(by_column: Summarizer) -> tuple[float, str]:
    """``(epsilon_pure, label)`` of the column pair (the profile's pure epsilon, exactly)."""
    got = by_column(None, None)
    return got.epsilon_pure, got.worst.get("epsilon_pure", "")


def _column_pair(matrix: np.ndarray, make: Callable) -> PairAnalysis:
    """The column pair of a channel: ``p = `` each column's largest entry, ``q = `` its least,
    labelled by the two rows of the column with the largest ratio (float ratios, for the label
    only)."""
    hi, lo = matrix.max(axis=0), matrix.min(axis=0)
    f_hi, f_lo = np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(f_hi > 0, f_hi / f_lo, 0.0)
    y = int(np.argmax(ratio))
    col = np.asarray(matrix[:, y], dtype=np.float64)
    return make(hi, lo, f"x={int(np.argmax(col))},x'={int(np.argmin(col))}")


def complete_summary(count: int, columns: Summarizer, every_pair: Summarizer) -> Summarizer:
    """The maxima over every ordered pair of a channel's inputs (the complete graph), from one
    *column pair* where that is exact, else from the pairs themselves.

    Why it is exact. Over all ordered pairs ``(a, b)``, ``max_{a,b,y} P[a, y] / P[b, y] =
    max_y (max_a P[a, y]) / (min_b P[b, y])`` (``a`` and ``b`` range independently over all
    rows; a column with a zero and a positive entry is infinite either way), so the column
    pair ``(max of each column, min of each column)`` has the pure epsilon of the profile,
    value for value and in the same arithmetic. Its hockey-stick sum ``sum_y max(0, max_a
    P[a, y] - E min_b P[b, y])`` is at least every pair's ``sum_y max(0, P[a, y] - E P[b, y])``,
    so where the column pair's ``delta`` at ``eps`` (DP and PDP) is 0, every pair's is 0: the
    tight maximum. At ``delta = 0`` both inverse maps equal the pure epsilon
    (:func:`~optnoise.analysis.exact_fast.certify_pairs`). In any other case (a ``delta``
    asked at an epsilon below the pure one, or an epsilon at ``delta > 0``) every pair is
    visited (``every_pair``). Used for channels with at least :data:`STREAM_CELLS` cells over
    the pairs; the tests compare it with the plain analysis.

    Proof: docs/proofs/per-record-certificate.md.
    """
    def summarize(eps: float | None, delta: float | None) -> PairMaxima:
        quick = columns(eps, delta)
        zero = eps is None or (quick.delta_dp == 0 and quick.delta_pdp == 0)
        if not (zero and (delta is None or delta == 0)):
            return every_pair(eps, delta)
        label = quick.worst.get("epsilon_pure", "")
        return PairMaxima(quick.epsilon_pure, quick.delta_dp, quick.delta_pdp, quick.epsilon_dp, quick.epsilon_pdp,
                          pairs=count, worst={k: label for k in quick.worst})
    return summarize


def pairs_from_arrays(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> PrivacyProfile:
    """Profile of explicit ``(p, p')`` arrays (for tests and custom mechanisms)."""
    return PrivacyProfile(tuple(FloatPair(np.asarray(p, float), np.asarray(q, float), label=str(i))
                                for i, (p, q) in enumerate(pairs)), None, space="pairs")


def neighbourhood_json(neighbourhood: Neighbourhood | InputPairs | None) -> dict:
    """``{"distances", "directed"}`` or ``{"pairs", "directed"}`` (the CLI's key)."""
    if neighbourhood is None:
        return {}
    return neighbourhood.to_json()


@dataclass(frozen=True)
class Guarantee:
    """The values ``optnoise verify`` reports (docs/cli.md keys)."""

    epsilon_pure: float
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    delta_pdp: float | None
    epsilon_dp: float | None
    epsilon_pdp: float | None
    neighbourhood: dict = field(default_factory=dict)
    exact: bool = False

    def to_json(self, *, point: bool = True) -> dict:
        """The values; ``point=False`` leaves out where they were evaluated (``epsilon``,
        ``delta``) and the neighbourhood, for a report that states them once elsewhere."""
        out = {
            "epsilon_pure": self.epsilon_pure,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "delta_dp": self.delta_dp,
            "delta_pdp": self.delta_pdp,
            "epsilon_dp": self.epsilon_dp,
            "epsilon_pdp": self.epsilon_pdp,
            "neighbourhood": self.neighbourhood,
            "exact": self.exact,
        }
        if not point:
            for key in ("epsilon", "delta", "neighbourhood"):
                del out[key]
        return out

    def meets(self, target: Target) -> bool:
        """:meth:`PrivacyProfile.meets` on the evaluated values (needs ``epsilon`` at the
        target's epsilon for an approximate target)."""
        if not target.pure and self.epsilon != target.epsilon:
            raise InvalidParameterError("target", target.to_json(), f"a target at the evaluated epsilon {self.epsilon}")
        delta = None if target.pure else self.delta_dp if target.notion == "dp" else self.delta_pdp
        return target.admits(self.epsilon_pure, delta, exact=self.exact)


def guarantee(profile: PrivacyProfile, epsilon: float | None = None, delta: float | None = None) -> Guarantee:
    """Evaluate a profile at an ``epsilon`` and/or a ``delta``."""
    v = profile.values(epsilon, delta)
    return Guarantee(
        epsilon_pure=v.epsilon_pure,
        epsilon=epsilon,
        delta=delta,
        delta_dp=v.delta_dp,
        delta_pdp=v.delta_pdp,
        epsilon_dp=v.epsilon_dp,
        epsilon_pdp=v.epsilon_pdp,
        neighbourhood=neighbourhood_json(profile.neighbourhood),
        exact=profile.exact,
    )
