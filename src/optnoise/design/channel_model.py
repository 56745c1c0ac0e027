"""The channel LP/MILP on ``{0..n}``: the model, its lossless reductions, and its solution.

A *channel* is a row-stochastic matrix ``P[q, y]`` (docs/architecture.md: the universal
representation); :mod:`optnoise.design.channel` says what the design finds. This module
writes the problem for HiGHS and solves it:

* **The channel LP** (approximate DP): variables ``P[q, y]``, rows summing to 1, and per
  ordered neighbouring pair ``(a, b)``

  - ``delta = 0``: ``P[a, y] <= e^eps P[b, y]`` for every ``y``;
  - ``delta > 0``: the hockey-stick divergence ``sum_y max(0, P[a, y] - e^eps P[b, y]) <=
    delta`` (tight for approximate DP, docs/architecture.md "Two notions"), linearised by
    epigraph variables ``t[a, b, y] >= P[a, y] - e^eps P[b, y]``, ``t >= 0``,
    ``sum_y t[a, b, .] <= delta``.

  The objective is ``sum_q pi(q) sum_y P[q, y] L[q, y]`` or the worst case ``z`` with
  ``z >= sum_y P[q, y] L[q, y]`` for every ``q`` (an epigraph).
* **Structural constraints** after Cormode, Kulkarni & Srivastava (2018)
  (:data:`~optnoise.design.request.CONSTRAINTS`).
* **PDP channels** (Kadam Def. 2 on pairs of rows): a MILP with one indicator per (pair,
  output), polished as an LP with the indicators fixed; small ``n`` only (:data:`MAX_PDP_N`).

Lossless reductions (each with its proof beside the code): the complete pair graph under
pure DP is written with one per-column minimum ``m_y`` and ``P[a, y] = m_y + s[a, y]``,
``0 <= s <= (e^eps - 1) m_y`` (``(n+1)^2`` rows instead of ``n (n+1)^2``); a problem invariant
under the mirror ``q -> n - q`` is solved over mirror-symmetric channels (half the
variables); a circulant channel is written with its first row only, one pair per distance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..target import Target
from .csr import CSR, vstack
from .bounds import exp_up
from .request import CONSTRAINTS, check_n
from .solver import RATIO_MARGIN, solve_lp, solve_milp


#: The PDP MILP has one binary per (ordered pair, output), up to ``n (n+1)^2``; above
#: :data:`PDP_ROW_GENERATION_MIN_CELLS` cells it is solved by row generation. Larger ``n`` is
#: refused: bench/channel.py --scale measured neighbours one apart (eps 1, delta 0.05) at
#: n = 12 in 22 s (the full MILP: 129 s) and n = 16 in 224 s, load 3-4.
MAX_PDP_N = 16
#: Dual simplex pricing for the channel LPs: devex was 15-30 % faster than HiGHS's default
#: on the n = 100 models (bench/channel.py).
LP_OPTIONS = {"simplex_dual_edge_weight_strategy": "devex"}
#: Absolute margin on delta when solving (at most 1e-3 delta): HiGHS's feasibility tolerance
#: (1e-10) is absolute, so a relative margin would not keep a small delta from being crossed.
DELTA_MARGIN = 1e-9


# ============================================================== neighbours
def pairs_from_distances(n: int, distances: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Ordered pairs ``(q, q')`` of ``{0..n}`` with ``q - q'`` in ``+-distances``, no wrap-around.

    The symmetric value-distance neighbourhood of an ordered domain (distances ``{1}``:
    ages one year apart): :meth:`~optnoise.neighbourhood.InputPairs.from_distances`, with
    every distance checked to lie in ``1..n``. Unlike modulo noise's cyclic neighbourhood it
    has no pair ``(0, n)``.
    """
    size = check_n(n)[0]
    given = list(distances)
    ds = sorted({abs(int(d)) for d in given})
    if not ds or ds[0] == 0 or ds[-1] > size - 1:
        raise InvalidParameterError("distances", given, f"non-zero distances with |d| <= {size - 1}")
    return tuple(InputPairs.from_distances(Neighbourhood(tuple(ds)), size).pairs)


def all_pairs(n: int) -> tuple[tuple[int, int], ...]:
    """Every ordered pair of distinct answers: the per-record privacy unit (docs/architecture.md)."""
    return InputPairs.complete(check_n(n)[0], directed=True).pairs


def cyclic_pairs(n: int, neighbourhood: Neighbourhood) -> tuple[tuple[int, int], ...]:
    """The input pairs of noise added modulo ``n + 1`` under query distances: ``(a, (a - s)
    mod (n+1))`` for every answer ``a`` and ordered cyclic shift ``s`` (wrap pairs included).

    For the channel ``P[q, y] = f((y - q) mod (n+1))`` the pair ``(a, b)`` compares ``f(eta)``
    with ``f(eta + a - b)``: the shift ``s = a - b`` of Kadam et al. (7)-(8).
    """
    size = check_n(n)[0]
    shifts = [s[0] for s in neighbourhood.cyclic_shifts((size,))]
    return tuple((a, (a - s) % size) for s in shifts for a in range(size))


def ordered_pairs(pairs: Iterable[tuple[int, int]] | InputPairs | str | None, size: int) -> tuple[tuple[int, int], ...]:
    """The ordered input pairs of the channel functions' ``pairs`` argument: ``None`` is
    neighbours one apart (:func:`pairs_from_distances`), ``"all"`` every pair (:func:`all_pairs`),
    an :class:`InputPairs` is expanded by its own rule, and a sequence is taken as listed."""
    if pairs is None:
        return pairs_from_distances(size - 1, [1])
    if isinstance(pairs, str):
        if pairs != "all":
            raise InvalidParameterError("pairs", pairs, "'all' (per record), input pairs or None (neighbours one "
                                                        "apart)")
        return all_pairs(size - 1)
    if isinstance(pairs, InputPairs):
        return tuple(pairs.ordered(size))
    return tuple(InputPairs(tuple(pairs), directed=True).ordered(size))


def complete_on(pairs: tuple[tuple[int, int], ...]) -> tuple[int, ...] | None:
    """The vertex set ``V`` if the pairs are exactly all ordered pairs of distinct ``V``."""
    verts = sorted({v for p in pairs for v in p})
    k = len(verts)
    return tuple(verts) if len(set(pairs)) == k * (k - 1) else None


# ============================================================== model building
@dataclass(frozen=True)
class Layout:
    """Column offsets of the *full* variable space of one channel model:
    ``P`` (``size^2``, flat ``q * size + y``), ``m`` (per-column minimum, complete-graph
    reduction only), ``t`` or ``w`` (per pair and output), ``u`` (PDP indicators), ``z``
    (worst-case epigraph)."""

    size: int
    n_pairs: int
    complete: bool
    per_pair: bool     # t (hockey-stick epigraph) or w (PDP) block present
    pdp: bool          # u block present
    worst: bool

    @property
    def n_p(self) -> int:
        return self.size * self.size

    @property
    def off_m(self) -> int:
        return self.n_p

    @property
    def off_t(self) -> int:
        return self.off_m + (self.size if self.complete else 0)

    @property
    def off_u(self) -> int:
        return self.off_t + (self.n_pairs * self.size if self.per_pair else 0)

    @property
    def off_z(self) -> int:
        return self.off_u + (self.n_pairs * self.size if self.pdp else 0)

    @property
    def n_cols(self) -> int:
        return self.off_z + (1 if self.worst else 0)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lb, ub, integrality)`` of the full variables: probabilities and per-column minima
        in ``[0, 1]``; PDP ``w`` and ``u`` in ``[0, 1]`` (``u`` integer); ``t``, ``z`` ``>= 0``."""
        lb = np.zeros(self.n_cols)
        ub = np.full(self.n_cols, np.inf)
        ub[:self.off_t] = 1.0
        integ = np.zeros(self.n_cols)
        if self.pdp:
            ub[self.off_t:self.off_z] = 1.0
            integ[self.off_u:self.off_z] = 1
        return lb, ub, integ


@dataclass(frozen=True)
class Model:
    """A model in reduced variables ``x``; the full variables are ``S @ x``."""

    c: np.ndarray
    blocks: list
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    S: CSR
    layout: Layout
    method: str

    @property
    def n_cols(self) -> int:
        return int(self.c.size)


def block(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, n_rows: int, n_cols: int) -> CSR:
    """The rows of one block from coordinates (:class:`~optnoise.design.csr.CSR`: no scipy.sparse
    import for a small query's LP, issue 37)."""
    return CSR.coo(rows, cols, data, (n_rows, n_cols))


def sum_rows(k: int, n: int, offset: int, n_cols: int) -> CSR:
    """``k`` rows, row ``i`` summing the ``n`` variables from ``offset + i n``."""
    return block(np.repeat(np.arange(k), n), np.arange(k * n) + offset, np.ones(k * n), k, n_cols)


def ratio_rows(pa: np.ndarray, pb: np.ndarray, size: int, e: float, n_cols: int,
                t_offset: int | None) -> CSR:
    """Rows ``P[a_k, y] - e P[b_k, y] (- t[k, y])`` for pairs ``k`` and outputs ``y``."""
    k = pa.size
    y = np.tile(np.arange(size), k)
    r = np.arange(k * size)
    rows = [r, r]
    cols = [np.repeat(pa, size) * size + y, np.repeat(pb, size) * size + y]
    data = [np.ones(k * size), np.full(k * size, -e)]
    if t_offset is not None:
        rows.append(r)
        cols.append(t_offset + r)
        data.append(np.full(k * size, -1.0))
    return block(np.concatenate(rows), np.concatenate(cols), np.concatenate(data), k * size, n_cols)


def structural_rows(name: str, size: int, n_cols: int) -> tuple[CSR, np.ndarray, np.ndarray]:
    """``(A, lo, hi)`` for one structural constraint, on the ``P`` block (flat ``q * size + y``)."""
    idx = np.arange(size * size).reshape(size, size)
    pairs: list[tuple[int, int]] = []   # (smaller, larger): P[smaller] - P[larger] <= 0
    if name == "row-monotone":
        for q in range(size):
            pairs += [(idx[q, y + 1], idx[q, y]) for y in range(q, size - 1)]
            pairs += [(idx[q, y - 1], idx[q, y]) for y in range(1, q + 1)]
    elif name == "column-monotone":
        for y in range(size):
            pairs += [(idx[q + 1, y], idx[q, y]) for q in range(y, size - 1)]
            pairs += [(idx[q - 1, y], idx[q, y]) for q in range(1, y + 1)]
    elif name == "weak-honest":
        pairs = [(idx[q, y], idx[q, q]) for q in range(size) for y in range(size) if y != q]
    if pairs:
        a = np.array(pairs)
        k = a.shape[0]
        r = np.arange(k)
        A = block(np.concatenate((r, r)), np.concatenate((a[:, 0], a[:, 1])),
                   np.concatenate((np.ones(k), -np.ones(k))), k, n_cols)
        return A, np.full(k, -np.inf), np.zeros(k)
    if name == "fair":
        r = np.arange(size - 1)
        diag = idx[np.arange(1, size), np.arange(1, size)]
        A = block(np.concatenate((r, r)), np.concatenate((diag, np.zeros(size - 1, int))),
                   np.concatenate((np.ones(size - 1), -np.ones(size - 1))), size - 1, n_cols)
        return A, np.zeros(size - 1), np.zeros(size - 1)
    if name == "unbiased":
        A = block(np.repeat(np.arange(size), size), idx.ravel(), np.tile(np.arange(size, dtype=float), size),
                   size, n_cols)
        target = np.arange(size, dtype=float)
        return A, target, target
    if name == "circulant":
        q = np.repeat(np.arange(1, size), size)
        y = np.tile(np.arange(size), size - 1)
        r = np.arange(q.size)
        A = block(np.concatenate((r, r)), np.concatenate((idx[q, y], idx[0, (y - q) % size])),
                   np.concatenate((np.ones(q.size), -np.ones(q.size))), q.size, n_cols)
        return A, np.zeros(q.size), np.zeros(q.size)
    raise InvalidParameterError("constraints", name, "any of " + ", ".join(CONSTRAINTS))


@dataclass(frozen=True)
class ChannelProblem:
    """Everything that defines one channel design problem (validated)."""

    size: int
    pairs: tuple[tuple[int, int], ...]
    L: np.ndarray
    prior: np.ndarray
    worst: bool
    epsilon: float
    delta: float
    notion: str
    constraints: tuple[str, ...]
    exploit_structure: bool
    time_limit: float | None

    def replace(self, **kw) -> ChannelProblem:
        return replace(self, **kw)

    @property
    def target(self) -> Target:
        return Target(self.epsilon, self.delta, self.notion)


def mirror_symmetric(pb: ChannelProblem) -> bool:
    """Whether the problem is invariant under the reflection ``q -> n - q``, ``y -> n - y``.

    Then an optimal channel with ``P[q, y] = P[n-q, n-y]`` exists (for DP), so fixing that
    symmetry loses nothing: if ``P`` is optimal, its mirror ``R(P)`` is feasible (the pair
    ``(n-a, n-b)`` is a neighbour whenever ``(a, b)`` is, and a DP condition on a pair of rows
    does not change when the outputs are permuted) and costs the same (``L`` and the prior
    are mirror-invariant; in the worst case the row costs are permuted). The feasible set is
    convex (pure DP: linear rows; approximate DP: the hockey-stick divergence is jointly
    convex), so ``(P + R(P)) / 2`` is feasible, mirror-symmetric and costs no more. Every
    structural constraint of :data:`CONSTRAINTS` is mirror-invariant (``unbiased``:
    ``sum_y y P[n-q, n-y] = n - (n - q) = q``). Not used for PDP (not convex).
    """
    n = pb.size - 1
    pairs = set(pb.pairs)
    return (pb.notion == "dp" or pb.delta == 0) and {(n - a, n - b) for a, b in pairs} == pairs \
        and np.array_equal(pb.L, pb.L[::-1, ::-1]) and (pb.worst or np.array_equal(pb.prior, pb.prior[::-1]))


def circulant_model(pb: ChannelProblem) -> ChannelProblem:
    """The problem with one pair per cyclic distance and without the ``circulant`` rows.

    Lossless for circulant channels ``P[q, y] = f((y - q) mod N)``: the pair ``(a, b)``
    compares ``P[a, y] = f(eta)`` with ``P[b, y] = f(eta + a - b)`` (``eta = y - a``, a
    permutation of the outputs), so every DP or PDP condition on it depends only on
    ``(a - b) mod N``, and one pair per such distance gives the same constraints. The
    circulant rows are implied by the substitution ``P = S f``.
    """
    seen: dict[int, tuple[int, int]] = {}
    for a, b in pb.pairs:
        seen.setdefault((a - b) % pb.size, (a, b))
    return pb.replace(pairs=tuple(seen.values()), constraints=tuple(c for c in pb.constraints if c != "circulant"))


def reduction(pb: ChannelProblem, plain_lp: bool) -> str:
    if not pb.exploit_structure:
        return "identity"
    if "circulant" in pb.constraints:
        return "circulant"
    if plain_lp and pb.delta == 0.0 and complete_on(pb.pairs) is not None:
        return "complete"
    if plain_lp and mirror_symmetric(pb):
        return "mirror"
    return "identity"


def substitution(pb: ChannelProblem, lay: Layout, kind: str) -> tuple[CSR, np.ndarray, np.ndarray, np.ndarray]:
    """``(S, lb, ub, integrality)`` of the reduced variables ``x`` with full variables ``S @ x``.

    Each reduced variable takes the bounds of a full variable it stands for.
    """
    size, n_full = pb.size, lay.n_cols
    lb, ub, integ = lay.bounds()
    if kind == "identity":
        return CSR.identity(n_full), lb, ub, integ
    if kind == "complete":
        # x = [s (size^2) | m (size) | z]: P[a, y] = s[a, y] + m_y for a in V, P = s elsewhere
        verts = np.array(sorted({v for p in pb.pairs for v in p}))
        y = np.tile(np.arange(size), verts.size)
        r = np.concatenate((np.arange(n_full), np.repeat(verts, size) * size + y))
        c = np.concatenate((np.arange(n_full), lay.off_m + y))
        return block(r, c, np.ones(r.size), n_full, n_full), lb, ub, integ
    if kind == "circulant":
        # x = [f (size) | the rest]: P[q, y] = f[(y - q) mod size]
        q, y = np.divmod(np.arange(lay.n_p), size)
        rest = np.arange(lay.n_p, n_full)
        cols = np.concatenate(((y - q) % size, size + rest - lay.n_p))
        rep = np.concatenate((np.arange(size), rest))
        return block(np.arange(n_full), cols, np.ones(n_full), n_full, rep.size), lb[rep], ub[rep], integ[rep]
    # mirror: P[q, y] = P[n-q, n-y] and t[k, y] = t[mirror(k), n-y]
    n = size - 1
    rep = np.arange(n_full)
    idx = np.arange(size * size)
    rep[: lay.n_p] = np.minimum(idx, idx.reshape(size, size)[::-1, ::-1].ravel())
    if lay.per_pair:
        pos = {p: k for k, p in enumerate(pb.pairs)}
        mk = np.array([pos[(n - a, n - b)] for a, b in pb.pairs])
        kk = np.repeat(np.arange(len(pb.pairs)), size)
        yy = np.tile(np.arange(size), len(pb.pairs))
        rep[lay.off_t:lay.off_u] = lay.off_t + np.minimum(kk * size + yy, mk[kk] * size + (n - yy))
    uniq, red = np.unique(rep, return_inverse=True)
    return block(np.arange(n_full), red, np.ones(n_full), n_full, uniq.size), lb[uniq], ub[uniq], integ[uniq]


Blocks = list[tuple[CSR, np.ndarray, np.ndarray]]


def _upper(blocks: Blocks, A: CSR, hi: float) -> None:
    """Append the rows ``A x <= hi``."""
    blocks.append((A, np.full(A.shape[0], -np.inf), np.full(A.shape[0], float(hi))))


def _complete_rows(blocks: Blocks, pb: ChannelProblem, lay: Layout, e: float) -> None:
    """Pure DP on the complete graph on ``V``, reduced (lossless): for a fixed column ``y``
    the constraints ``P[a, y] <= e P[b, y]`` for all ordered ``a != b`` in ``V`` say exactly
    ``max_{a in V} P[a, y] <= e min_{b in V} P[b, y]`` (``a = b`` is implied since ``e >= 1``),
    i.e. some ``m_y`` has ``m_y <= P[a, y] <= e m_y`` for every ``a`` in ``V``. Substituting
    ``P[a, y] = m_y + s[a, y]`` with ``s >= 0`` leaves one row per ``(a, y)``:
    ``s[a, y] <= (e - 1) m_y``. Rows: ``|V| (n+1)`` instead of ``|V| (|V| - 1) (n+1)``."""
    size = pb.size
    verts = np.array(sorted({v for p in pb.pairs for v in p}))
    v = np.repeat(verts, size)
    y = np.tile(np.arange(size), verts.size)
    r = np.arange(v.size)
    _upper(blocks, block(np.concatenate((r, r)), np.concatenate((v * size + y, lay.off_m + y)),
                         np.concatenate((np.ones(v.size), np.full(v.size, -e))), v.size, lay.n_cols), 0.0)


def _polish_rows(blocks: Blocks, pb: ChannelProblem, lay: Layout, e: float, d: float, pattern: np.ndarray) -> None:
    """The polishing LP of a PDP design: ratio rows only where the indicator is 0, and a mass
    row ``sum_{y: u = 1} P[a, y] <= delta`` per pair."""
    size, n_cols = pb.size, lay.n_cols
    pa, pbb = _pair_arrays(pb)
    _upper(blocks, ratio_rows(pa, pbb, size, e, n_cols, None)[~pattern.ravel()], 0.0)
    rows, cols = [], []
    for k in range(len(pb.pairs)):
        ys = np.flatnonzero(pattern[k])
        rows += [k] * ys.size
        cols += list(pa[k] * size + ys)
    if rows:
        A = block(np.array(rows), np.array(cols), np.ones(len(rows)), len(pb.pairs), n_cols)
        _upper(blocks, A[pattern.any(axis=1)], d)


def _pdp_rows(blocks: Blocks, pb: ChannelProblem, lay: Layout, e: float, d: float,
              cells: np.ndarray | None = None) -> None:
    """Kadam Def. 2 on pairs of rows, as design/finite.py's standard PDP MILP:
    ``w = u P[a, y]``; ``P[a,y] - e P[b,y] <= w``, ``w <= P[a,y]``, ``w >= P[a,y] - (1 - u)``,
    ``w <= delta u``, ``sum_y w <= delta``. With ``cells`` (bool, pairs x outputs) only the
    rows of the kept (pair, output) cells are written (a relaxation: :func:`solve_pdp`)."""
    size, n_cols, K = pb.size, lay.n_cols, len(pb.pairs)
    pa, pbb = _pair_arrays(pb)
    kn = K * size
    r = np.arange(kn)
    y = np.tile(np.arange(size), K)
    pcol = np.repeat(pa, size) * size + y
    w = lay.off_t + r
    u = lay.off_u + r
    keep = slice(None) if cells is None else cells.ravel()
    _upper(blocks, ratio_rows(pa, pbb, size, e, n_cols, lay.off_t)[keep], 0.0)
    _upper(blocks, block(np.concatenate((r, r)), np.concatenate((w, pcol)),
                         np.concatenate((np.ones(kn), -np.ones(kn))), kn, n_cols)[keep], 0.0)
    _upper(blocks, block(np.concatenate((r, r, r)), np.concatenate((pcol, w, u)),
                         np.concatenate((np.ones(kn), -np.ones(kn), np.ones(kn))), kn, n_cols)[keep], 1.0)
    _upper(blocks, block(np.concatenate((r, r)), np.concatenate((w, u)),
                         np.concatenate((np.ones(kn), np.full(kn, -min(d, 1.0)))), kn, n_cols)[keep], 0.0)
    _upper(blocks, sum_rows(K, size, lay.off_t, n_cols), d)


def _pair_arrays(pb: ChannelProblem) -> tuple[np.ndarray, np.ndarray]:
    return np.array([p[0] for p in pb.pairs]), np.array([p[1] for p in pb.pairs])


def _privacy_rows(blocks: Blocks, pb: ChannelProblem, lay: Layout, kind: str, pattern: np.ndarray | None,
                  milp_model: bool, relaxed: bool = False, cells: np.ndarray | None = None) -> None:
    """The rows of the privacy target, for the model's kind (``relaxed``: at a float ``>= e^eps``
    and delta unshrunk, a relaxation of the true problem; else with the design's margins)."""
    e = exp_up(pb.epsilon) if relaxed else math.exp(pb.epsilon) * (1.0 - RATIO_MARGIN)
    d = pb.delta if relaxed else pb.delta - min(DELTA_MARGIN, 1e-3 * pb.delta)
    pa, pbb = _pair_arrays(pb)
    if kind == "complete":
        _complete_rows(blocks, pb, lay, e)
    elif pattern is not None:
        _polish_rows(blocks, pb, lay, e, d, pattern)
    elif milp_model:
        _pdp_rows(blocks, pb, lay, e, d, cells)
    elif pb.delta == 0.0:
        _upper(blocks, ratio_rows(pa, pbb, pb.size, e, lay.n_cols, None), 0.0)
    else:
        _upper(blocks, ratio_rows(pa, pbb, pb.size, e, lay.n_cols, lay.off_t), 0.0)
        _upper(blocks, sum_rows(len(pb.pairs), pb.size, lay.off_t, lay.n_cols), d)


def _objective_rows(blocks: Blocks, pb: ChannelProblem, lay: Layout) -> np.ndarray:
    """Structural constraints, rows summing to 1, and the objective (the prior average, or
    the worst case through ``z >= sum_y L[q, y] P[q, y]`` for every ``q``)."""
    size, n_cols = pb.size, lay.n_cols
    for name in pb.constraints:
        blocks.append(structural_rows(name, size, n_cols))
    one = np.ones(size)
    blocks.append((sum_rows(size, size, 0, n_cols), one, one))
    c = np.zeros(n_cols)
    if pb.worst:
        A = block(np.concatenate((np.repeat(np.arange(size), size), np.arange(size))),
                  np.concatenate((np.arange(size * size), np.full(size, lay.off_z))),
                  np.concatenate((pb.L.ravel(), -np.ones(size))), size, n_cols)
        _upper(blocks, A, 0.0)
        c[lay.off_z] = 1.0
    else:
        c[:lay.n_p] = (pb.prior[:, None] * pb.L).ravel()
    return c


def build_model(pb: ChannelProblem, *, pdp_pattern: np.ndarray | None = None, milp_model: bool = False,
                relaxed: bool = False, cells: np.ndarray | None = None) -> Model:
    """The sparse model of one problem.

    ``milp_model`` builds the PDP MILP; ``pdp_pattern`` (bool, pairs x outputs) builds the
    polishing LP of a PDP design: ratio rows only where the indicator is 0, and a mass row
    ``sum_{y: u = 1} P[a, y] <= delta`` per pair. Otherwise the DP LP. Each is reduced where
    that is provably lossless (:func:`reduction`). ``relaxed`` writes the ratio rows with a
    float ``>= e^eps`` and delta unshrunk: a relaxation of the true problem, whose bound from
    any multipliers bounds the true optimum (:func:`optnoise.design.channel_design.lp_lower_bound`).
    ``cells`` (PDP MILP only; bool, pairs x outputs of the model's pairs) keeps the rows and the
    ``w``/``u`` variables of those (pair, output) cells only: the relaxation solved by row
    generation (:func:`solve_pdp`).
    """
    plain_lp = pdp_pattern is None and not milp_model
    kind = reduction(pb, plain_lp)
    if kind == "circulant":
        pb = circulant_model(pb)
    lay = Layout(pb.size, len(pb.pairs), complete=kind == "complete",
                 per_pair=milp_model or (plain_lp and pb.delta != 0.0), pdp=milp_model, worst=pb.worst)
    method = "milp" if milp_model else {"complete": "lp-complete-graph", "mirror": "lp-mirror"}.get(kind, "lp")
    if kind == "circulant":
        method += "-circulant"
    blocks: Blocks = []
    _privacy_rows(blocks, pb, lay, kind, pdp_pattern, milp_model, relaxed, cells if milp_model else None)
    c = _objective_rows(blocks, pb, lay)
    S, lb, ubnd, integ = substitution(pb, lay, kind)
    if kind != "identity":
        blocks = [((A @ S).tocsr(), lo, hi) for A, lo, hi in blocks]
        if kind == "circulant":   # the rows of different answers coincide: keep one of each
            blocks = [unique_rows(A, lo, hi) for A, lo, hi in blocks]
        c = S.T @ c
    model = Model(np.asarray(c, float), blocks, lb, ubnd, integ, S, lay, method)
    return model if cells is None or not milp_model else drop_cells(model, cells)


def drop_cells(model: Model, cells: np.ndarray) -> Model:
    """The model without the ``w`` and ``u`` variables of the left-out cells (``~cells``).

    Their rows were not written (:func:`_pdp_rows`), so they appear only in the per-pair
    ``sum_y w`` rows, with coefficient ``+1`` on a ``<=`` row and bounds ``[0, 1]``: dropping
    them is fixing them at 0, which loses nothing (a left-out cell is unconstrained). The
    identity and circulant substitutions map each ``w``/``u`` to its own reduced variable.
    """
    lay = model.layout
    drop = np.flatnonzero(~cells.ravel())
    full = np.concatenate((lay.off_t + drop, lay.off_u + drop))
    S = model.S.tocsr()
    red = S[full].indices
    keep = np.ones(model.n_cols, dtype=bool)
    keep[red] = False
    blocks = [(A.columns(keep), lo, hi) for A, lo, hi in model.blocks]
    return replace(model, c=model.c[keep], blocks=blocks, lb=model.lb[keep], ub=model.ub[keep],
                   integrality=model.integrality[keep], S=S.columns(keep))


def unique_rows(A: CSR, lo: np.ndarray, hi: np.ndarray) -> tuple[CSR, np.ndarray, np.ndarray]:
    """Drop exact duplicate rows (same coefficients and bounds) of a block."""
    if A.shape[0] < 2:
        return A, lo, hi
    A = A.tocsr()
    A.sum_duplicates()
    A.sort_indices()
    keys = {}
    for i in range(A.shape[0]):
        s, t = A.indptr[i], A.indptr[i + 1]
        keys.setdefault((A.indices[s:t].tobytes(), A.data[s:t].tobytes(), lo[i], hi[i]), i)
    keep = np.array(sorted(keys.values()))
    return A[keep], lo[keep], hi[keep]


def split_blocks(blocks) -> tuple[CSR | None, np.ndarray | None, CSR | None, np.ndarray | None]:
    """``linprog`` form: ``A_ub x <= b_ub`` (``lo = -inf``) and ``A_eq x = b_eq`` (``lo = hi``)."""
    ub_a, ub_b, eq_a, eq_b = [], [], [], []
    for A, lo, hi in blocks:
        if np.all(lo == hi):
            eq_a.append(A)
            eq_b.append(hi)
        else:
            ub_a.append(A)
            ub_b.append(hi)
    stack = (lambda m: vstack(m) if m else None)
    cat = (lambda v: np.concatenate(v) if v else None)
    return stack(ub_a), cat(ub_b), stack(eq_a), cat(eq_b)


def solve_model_lp(model: Model, time_limit: float | None, duals: list | None = None) -> tuple[np.ndarray, float, int]:
    """:func:`~optnoise.design.solver.solve_lp`; returns the *full* variables, the objective
    and the number of rows; appends ``(y_ub, y_eq)`` to ``duals`` when given."""
    a_ub, b_ub, a_eq, b_eq = split_blocks(model.blocks)
    bounds = [(lo, None if math.isinf(hi) else hi) for lo, hi in zip(model.lb, model.ub)]
    res = solve_lp(model.c, a_ub, b_ub, a_eq, b_eq, bounds, time_limit, LP_OPTIONS)
    n_rows = (0 if a_ub is None else a_ub.shape[0]) + (0 if a_eq is None else a_eq.shape[0])
    if duals is not None:
        duals.append((None if a_ub is None else res.ineqlin.marginals, None if a_eq is None else res.eqlin.marginals))
    return model.S @ res.x, float(res.fun), n_rows


def solve_model_milp(model: Model, time_limit: float | None) -> tuple[np.ndarray, float, float, int, float | None]:
    """The MILP: the full variables, the objective, the MIP gap, the rows and HiGHS's best bound."""
    from scipy.optimize import Bounds, LinearConstraint

    cons = [LinearConstraint(A.to_scipy(), lo, hi) for A, lo, hi in model.blocks]
    res = solve_milp(model.c, cons, model.integrality, Bounds(model.lb, model.ub), time_limit)
    n_rows = sum(A.shape[0] for A, _, _ in model.blocks)
    bound = getattr(res, "mip_dual_bound", None)
    return (model.S @ res.x, float(res.fun), float(getattr(res, "mip_gap", 0.0) or 0.0), n_rows,
            None if bound is None else float(bound))


def model_size(size: int, pairs: tuple[tuple[int, int], ...], delta: float, constraints: tuple[str, ...],
                milp: bool, exploit: bool) -> int:
    """Coefficients of the model :func:`build_model` would write (after its reductions), roughly:
    ratio rows 2-3 per (pair, output) -- (n+1)^2 rows of 2 for the per-record reduction, one
    pair per distance when circulant -- plus the PDP rows, the rows sums, the objective's
    epigraph and the structural constraints (at most 2 per entry of P)."""
    k = len(pairs)
    if exploit and "circulant" in constraints:
        k = len({(a - b) % size for a, b in pairs})
    elif exploit and not milp and delta == 0 and complete_on(pairs) is not None:
        k = size
    per_pair = 2 * size * k
    if milp:
        per_pair *= 5
    elif delta > 0:
        per_pair = per_pair * 3 // 2 + k * size
    return per_pair + (2 + 2 * len(constraints)) * size * size
