"""One builder of neighbouring pairs, for the float and the exact analysis alike.

A mechanism's privacy is the maximum over its ordered neighbouring pairs of output
distributions ``(p, p')`` (docs/architecture.md, "Neighbourhoods"):

* cyclic noise on ``{0..n}`` (Kadam et al. 2024, eqs. (7)-(8)): for each ordered shift
  ``mu`` of ``M`` (``-M`` added when symmetric, mod ``n + 1``), ``p(eta) = f(eta)`` and
  ``p'(eta) = f(eta + mu mod (n + 1))``;
* noise on ``Z``: the same with integer shifts; beyond the window the masses are
  geometric with the tail's ratio (Geng & Viswanath (82)-(83)), so the window is
  extended by ``|mu| + period`` on each side with a tail and the outermost ``period``
  cells stand for their whole residue classes (weight ``1 / (1 - ratio)``): on such a
  class both masses are geometric with the same ratio, so the likelihood ratio is
  constant and the class is one cell of the loss distribution. Exact, no truncation;
* a channel: rows ``(P[x], P[x'])`` for each ordered input pair.

The builder works on float masses or, with ``exact=True``, on :class:`fractions.Fraction`
masses (a mechanism's exact twin when it has one, otherwise the exact binary value of
each float, and the exact binary value of each tail ratio).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pairs_bytes
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF

Representation = CyclicPMF | IntegerPMF | Channel


@dataclass(frozen=True, eq=False)
class PairMasses:
    """One ordered pair: masses ``p`` and ``p'`` cell by cell (cell weights already applied)."""

    p: np.ndarray
    q: np.ndarray
    label: str


def fraction_array(values: np.ndarray | None, floats: np.ndarray) -> np.ndarray:
    """Exact masses: ``values`` if given, else the exact binary value of each float."""
    if values is not None:
        return values
    out = np.empty(floats.shape, dtype=object)
    out.ravel()[:] = [Fraction(float(v)) for v in floats.ravel()]
    return out


def default_neighbourhood(mechanism: Representation,
                          neighbourhood: Neighbourhood | InputPairs | None) -> Neighbourhood | InputPairs:
    """The neighbourhood an analysis uses: SD 1 by default; input pairs for a channel
    (a :class:`Neighbourhood` becomes pairs ``q - q'`` in ``M``, without wrap-around)."""
    nb = neighbourhood if neighbourhood is not None else Neighbourhood((1,))
    if isinstance(mechanism, Channel):
        return nb if isinstance(nb, InputPairs) else InputPairs.from_distances(nb, mechanism.n_inputs)
    if not isinstance(nb, Neighbourhood):
        raise InvalidParameterError("neighbourhood", nb, "query distances for additive noise")
    return nb


def neighbouring_pairs(mechanism: Representation, neighbourhood: Neighbourhood | InputPairs | None = None,
                       *, exact: bool = False,
                       max_memory: int | None = None) -> tuple[list[PairMasses], Neighbourhood | InputPairs]:
    """Every ordered neighbouring pair of ``mechanism`` and the neighbourhood used.

    Parameters
    ----------
    mechanism:
        Cyclic noise, noise on Z (window and tails) or a channel.
    neighbourhood:
        Query distances (additive noise) or input pairs (channels); default SD 1.
    exact:
        Fraction masses instead of floats.
    max_memory:
        Bytes the pairs may take (default: :func:`optnoise.resources.default_limit`);
        larger analyses are refused before they are built.
    """
    nb = default_neighbourhood(mechanism, neighbourhood)
    if isinstance(mechanism, CyclicPMF):
        shifts = nb.cyclic_shifts(mechanism.shape)  # type: ignore[union-attr]
        _check_size(len(shifts), float(len(shifts)) * mechanism.size, exact, max_memory)
        f = fraction_array(mechanism.exact, mechanism.probs) if exact else mechanism.probs
        axes = tuple(range(f.ndim))
        out = []
        for shift in shifts:
            q = np.roll(f, tuple(-s for s in shift), axis=axes)
            out.append(PairMasses(f.ravel(), q.ravel(), f"mu={shift[0] if len(shift) == 1 else shift}"))
        return out, nb
    if isinstance(mechanism, IntegerPMF):
        mus = nb.integer_shifts()  # type: ignore[union-attr]
        periods = sum(t.period for t in (mechanism.left_tail, mechanism.right_tail) if t is not None)
        reach = float(np.abs(np.asarray(mus, dtype=float)).sum())  # each pair's window grows by 2 |mu|
        cells = float(len(mus)) * (mechanism.probs.size + periods) + 2 * reach
        _check_size(len(mus), cells, exact, max_memory)
        return [_integer_pair(mechanism, mu, exact) for mu in mus], nb
    if isinstance(mechanism, Channel):
        ordered = nb.ordered(mechanism.n_inputs)  # type: ignore[union-attr]
        _check_size(len(ordered), float(len(ordered)) * mechanism.n_outputs, exact, max_memory)
        m = fraction_array(mechanism.exact, mechanism.matrix) if exact else mechanism.matrix
        return [PairMasses(m[a], m[b], f"x={a},x'={b}") for a, b in ordered], nb
    raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")


def _check_size(pairs: int, cells: float, exact: bool, max_memory: int | None) -> None:
    """Refuse an analysis whose pairs would not fit (``cells`` masses over ``pairs`` pairs)."""
    check(pairs_bytes(1, cells, exact=exact), parameter="neighbourhood", value=f"{pairs} neighbouring pairs",
          what=f"the {'exact' if exact else 'float'} analysis of {pairs} pairs ({int(cells)} masses)",
          max_memory=max_memory)


def integer_masses(pmf: IntegerPMF, k: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """Masses at the integers ``k``, tails included; Fractions with ``exact``."""
    if not exact:
        return pmf.mass(k)
    base = fraction_array(pmf.exact, pmf.probs)
    out = np.empty(k.shape, dtype=object)
    out[...] = Fraction(0)
    inside = (k >= pmf.lo) & (k <= pmf.hi)
    out[inside] = base[k[inside] + pmf.offset]
    for tail, side in ((pmf.right_tail, 1), (pmf.left_tail, -1)):
        if tail is None:
            continue
        ratio = Fraction(tail.ratio)
        beyond = k > pmf.hi if side > 0 else k < pmf.lo
        j = (k[beyond] - pmf.hi - 1) if side > 0 else (pmf.lo - 1 - k[beyond])
        blocks = j // tail.period + 1
        pos = (pmf.probs.size - tail.period + j % tail.period) if side > 0 else (tail.period - 1 - j % tail.period)
        powers: dict[int, Fraction] = {}
        out[beyond] = [base[p] * powers.setdefault(int(b), ratio ** int(b)) for p, b in zip(pos, blocks)]
    return out


def _class_weight(tail: GeometricTail, exact: bool) -> Fraction | float:
    """``1 + r + r^2 + ... = 1 / (1 - r)``: a tail cell stands for its residue class."""
    return 1 / (1 - Fraction(tail.ratio)) if exact else 1.0 / (1.0 - tail.ratio)


def _integer_pair(pmf: IntegerPMF, mu: int, exact: bool) -> PairMasses:
    lt, rt = pmf.left_tail, pmf.right_tail
    lo = pmf.lo - (abs(mu) + lt.period if lt else 0)
    hi = pmf.hi + (abs(mu) + rt.period if rt else 0)
    eta = np.arange(lo, hi + 1, dtype=np.int64)
    p = integer_masses(pmf, eta, exact=exact)
    q = integer_masses(pmf, eta + mu, exact=exact)
    if rt or lt:
        w = np.ones(p.shape, dtype=object if exact else np.float64)
        if exact:
            w[...] = Fraction(1)
        if rt:
            w[-rt.period:] = _class_weight(rt, exact)
        if lt:
            w[:lt.period] = _class_weight(lt, exact)
        p, q = p * w, q * w
    return PairMasses(p, q, f"mu={mu}")
