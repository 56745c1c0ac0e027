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

The builder works on float masses; with ``exact=True`` on :class:`fractions.Fraction`
masses (a mechanism's exact twin when it has one, otherwise the exact binary value of
each float, and the exact binary value of each tail ratio); and on an :class:`IntegerForm`
-- the same exact masses written as integer weights over one common denominator
(:func:`integer_form`) -- with integer weights per pair, which the vectorised exact
analysis (:mod:`~optnoise.analysis.exact_fast`) certifies to the same values as the
Fraction path. :func:`pair_builders` gives each pair as a function that builds it, so
that an analysis can hold one pair at a time (O(n) memory whatever the number of pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator, Literal, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pairs_bytes
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from .exact_fast import MAX_WEIGHT_BITS, Weights, as_weights

Representation = CyclicPMF | IntegerPMF | Channel


@dataclass(frozen=True, eq=False)
class PairMasses:
    """One ordered pair: masses ``p`` and ``p'`` cell by cell (cell weights already applied).

    With a ``denominator``, ``p`` and ``q`` are non-negative integer weights (``uint64`` or
    Python ints, or the prepared :class:`~optnoise.analysis.exact_fast.Weights` of a cyclic
    PMF, computed once and rolled) and the masses are ``p / denominator`` and
    ``q / denominator`` exactly.
    """

    p: np.ndarray | Weights
    q: np.ndarray | Weights
    label: str
    denominator: int | None = None


@dataclass(frozen=True, eq=False)
class IntegerForm:
    """Exact masses of a mechanism as integer weights over one denominator.

    ``weights / denominator`` are the masses: of the cyclic PMF (its shape), of the window
    ``lo .. lo + size - 1`` of noise on Z, or of the channel matrix (every row over the
    same denominator). A tail on Z is ``(ratio, period)`` with the exact rational ratio.
    """

    kind: Literal["cyclic", "integer", "channel"]
    weights: np.ndarray
    denominator: int
    lo: int = 0
    left: tuple[Fraction, int] | None = None
    right: tuple[Fraction, int] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("cyclic", "integer", "channel"):
            raise InvalidParameterError("kind", self.kind, "'cyclic', 'integer' or 'channel'")
        if not (isinstance(self.denominator, int) and self.denominator > 0):
            raise InvalidParameterError("denominator", self.denominator, "a positive integer")
        w = np.asarray(self.weights)
        if w.dtype != object and w.dtype.kind not in "iu":
            raise InvalidParameterError("weights", str(w.dtype), "integer weights")
        if self.kind == "integer" and w.ndim != 1 or self.kind == "channel" and w.ndim != 2:
            raise InvalidParameterError("weights", f"shape {w.shape}", "a 1-D window (integer) or a matrix (channel)")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.weights))


PairBuilder = tuple[str, Callable[[], PairMasses]]


@dataclass(frozen=True, eq=False)
class EveryPair(Sequence):
    """Every ordered pair of distinct rows ``0..rows-1`` (the per-record unit of a channel),
    as ``make(a, b)`` for each, made when it is used: ``rows (rows - 1)`` of them without a
    Python object per pair (a million at ``n = 1,000``), in the order
    :meth:`~optnoise.neighbourhood.InputPairs.ordered` lists the complete graph -- so a tie
    between pairs resolves (and is labelled) as with the listed pairs:

    * ``interleaved=False`` (``InputPairs.complete(directed=True)``): index ``i`` is ``(a, b)``
      with ``a = i // (rows - 1)`` and ``b`` the ``i % (rows - 1)``-th row other than ``a``;
    * ``interleaved=True`` (``InputPairs.complete()``, symmetric): the pairs ``a < b`` in
      lexicographic order, each followed by its reverse.

    ``map(fn)`` gives the same pairs as ``fn(make(a, b))``, still lazily."""

    rows: int
    make: Callable[[int, int], Any]
    interleaved: bool = False

    def __len__(self) -> int:
        return self.rows * (self.rows - 1)

    def pair(self, i: int) -> tuple[int, int]:
        if not self.interleaved:
            a, r = divmod(i, self.rows - 1)
            return a, r + (r >= a)
        p, back = divmod(i, 2)
        k = self.rows
        # row a holds the pairs p in [a k - a (a + 1) / 2, (a + 1) k - (a + 1) (a + 2) / 2)
        a = int((2 * k - 1 - math.isqrt((2 * k - 1) ** 2 - 8 * p)) // 2)
        while a > 0 and a * k - a * (a + 1) // 2 > p:
            a -= 1
        while (a + 1) * k - (a + 1) * (a + 2) // 2 <= p:
            a += 1
        b = a + 1 + p - (a * k - a * (a + 1) // 2)
        return (b, a) if back else (a, b)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        j = int(i) + (len(self) if int(i) < 0 else 0)
        if not 0 <= j < len(self):
            raise IndexError(i)
        return self.make(*self.pair(j))

    def __iter__(self) -> Iterator[Any]:
        for a in range(self.rows):
            if self.interleaved:
                for b in range(a + 1, self.rows):
                    yield self.make(a, b)
                    yield self.make(b, a)
                continue
            for b in range(self.rows):
                if a != b:
                    yield self.make(a, b)

    def map(self, fn: Callable[[Any], Any]) -> "EveryPair":
        return EveryPair(self.rows, lambda a, b: fn(self.make(a, b)), self.interleaved)


def lazy_map(builders: Sequence[PairBuilder], fn: Callable[[str, Callable[[], PairMasses]], Any]) -> Sequence[Any]:
    """``fn(label, build)`` for every builder: lazily over :class:`EveryPair`, else a tuple."""
    if isinstance(builders, EveryPair):
        return builders.map(lambda lb: fn(*lb))
    return tuple(fn(label, build) for label, build in builders)


def every_pair_of(nb: Neighbourhood | InputPairs, rows: int) -> bool:
    """Whether ``nb`` is every ordered pair of ``rows`` inputs listed as
    :meth:`~optnoise.neighbourhood.InputPairs.complete` lists them (directed or not), large
    enough (at least ``2^12`` pairs) to be built lazily by :class:`EveryPair` in the same
    order. Pairs listed in another order take the listed path (ties keep their labels)."""
    if not (isinstance(nb, InputPairs) and rows * (rows - 1) >= 1 << 12 and nb.covers_all(rows)):
        return False
    arr = nb.array
    keys = arr[:, 0].astype(np.int64) * rows + arr[:, 1]
    in_order = bool(np.all(keys[1:] > keys[:-1]))
    return in_order if nb.directed else in_order and bool(np.all(arr[:, 0] < arr[:, 1]))


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


def pair_builders(mechanism: Representation | IntegerForm,
                  neighbourhood: Neighbourhood | InputPairs | None = None, *,
                  exact: bool = False, max_memory: int | None = None,
                  ) -> tuple[list[PairBuilder], Neighbourhood | InputPairs]:
    """Every ordered neighbouring pair as ``(label, build)``, and the neighbourhood used.

    ``build()`` makes the pair's :class:`PairMasses` when called (nothing is kept), so an
    analysis can visit the pairs one at a time. An :class:`IntegerForm` gives integer
    weights with a denominator; a representation gives floats, or Fractions with ``exact``.
    ``max_memory`` bounds one pair's masses (:mod:`optnoise.resources`): a pair that would
    not fit is refused before anything is built.
    """
    if isinstance(mechanism, IntegerForm):
        return _integer_form_builders(mechanism, neighbourhood)
    nb = default_neighbourhood(mechanism, neighbourhood)
    _check_pair_size(mechanism, nb, exact, max_memory)
    if isinstance(mechanism, CyclicPMF):
        f = fraction_array(mechanism.exact, mechanism.probs) if exact else mechanism.probs
        return [(_cyclic_label(shift), lambda shift=shift: _cyclic_pair(f, shift, None))
                for shift in nb.cyclic_shifts(mechanism.shape)], nb  # type: ignore[union-attr]
    if isinstance(mechanism, IntegerPMF):
        return [(f"mu={mu}", lambda mu=mu: _integer_pair(mechanism, mu, exact))
                for mu in nb.integer_shifts()], nb  # type: ignore[union-attr]
    if isinstance(mechanism, Channel):
        m = fraction_array(mechanism.exact, mechanism.matrix) if exact else mechanism.matrix
        if every_pair_of(nb, mechanism.n_inputs):
            return EveryPair(mechanism.n_inputs, lambda a, b: (  # type: ignore[return-value]
                f"x={a},x'={b}", lambda: PairMasses(m[a], m[b], f"x={a},x'={b}")), not nb.directed), nb
        return [(f"x={a},x'={b}", lambda a=a, b=b: PairMasses(m[a], m[b], f"x={a},x'={b}"))
                for a, b in nb.ordered(mechanism.n_inputs)], nb  # type: ignore[union-attr]
    raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")


def neighbouring_pairs(mechanism: Representation | IntegerForm,
                       neighbourhood: Neighbourhood | InputPairs | None = None, *,
                       exact: bool = False, max_memory: int | None = None,
                       ) -> tuple[list[PairMasses], Neighbourhood | InputPairs]:
    """Every ordered neighbouring pair of ``mechanism`` and the neighbourhood used.

    Parameters
    ----------
    mechanism:
        Cyclic noise, noise on Z (window and tails), a channel, or an :class:`IntegerForm`.
    neighbourhood:
        Query distances (additive noise) or input pairs (channels); default SD 1.
    exact:
        Fraction masses instead of floats.
    max_memory:
        Bytes the pairs may take (default: :func:`optnoise.resources.default_limit`);
        larger analyses are refused before they are built.
    """
    builders, nb = pair_builders(mechanism, neighbourhood, exact=exact, max_memory=max_memory)
    if not isinstance(mechanism, IntegerForm):  # all pairs are kept at once here
        _check_pair_size(mechanism, nb, exact, max_memory, pairs=len(builders))
    return [build() for _, build in builders], nb


def _check_pair_size(mechanism: Representation, nb: Neighbourhood | InputPairs, exact: bool,
                     max_memory: int | None, pairs: int = 1) -> None:
    """Refuse an analysis whose pairs would not fit in memory (``pairs`` pairs held at once)."""
    count, cells = pair_size(mechanism, nb)
    check(pairs_bytes(1, pairs * cells, exact=exact), parameter="neighbourhood", value=f"{count} neighbouring pairs",
          what=f"the {'exact' if exact else 'float'} analysis of {count} pairs ({int(cells)} masses each)",
          max_memory=max_memory)


def check_exact_time(mechanism: Representation, nb: Neighbourhood | InputPairs, max_seconds: float | None) -> None:
    """Refuse, before it starts, an exact analysis (Fractions, outward rounding) that would
    take longer than ``max_seconds`` (:func:`optnoise.resources.exact_seconds` of its pairs
    and masses; ``None``: the default limit). Issue 26: ``--bd 400 --exact`` on a geometric
    ran five minutes."""
    from ..resources import check_time, exact_seconds
    count, cells = pair_size(mechanism, nb)
    if isinstance(mechanism, IntegerPMF):   # geometric tails: their masses down to about 2^-20 count too
        for t in (mechanism.left_tail, mechanism.right_tail):
            if t is not None and 0 < t.ratio < 1:
                cells += min(math.ceil(math.log(2.0 ** -20) / math.log(t.ratio)) * t.period, 4096)
    check_time(exact_seconds(count, cells), parameter="neighbourhood", value=f"{count} neighbouring pairs",
               what=f"the exact analysis of {count} pairs ({int(cells)} masses each)",
               way_out="fewer distances, or the float analysis (without --exact)", max_seconds=max_seconds)


def pair_size(mechanism: Representation, nb: Neighbourhood | InputPairs) -> tuple[int, float]:
    """``(pairs, masses per pair)`` of an analysis: what its memory and time grow with."""
    if isinstance(mechanism, CyclicPMF):
        count, cells = len(nb.cyclic_shifts(mechanism.shape)), float(mechanism.size)  # type: ignore[union-attr]
    elif isinstance(mechanism, IntegerPMF):
        mus = nb.integer_shifts()  # type: ignore[union-attr]
        periods = sum(t.period for t in (mechanism.left_tail, mechanism.right_tail) if t is not None)
        count = len(mus)
        cells = mechanism.probs.size + periods + 2.0 * max(abs(m) for m in mus)  # a pair's window grows by 2|mu|
    else:
        count, cells = len(nb.ordered(mechanism.n_inputs)), float(mechanism.n_outputs)  # type: ignore[union-attr]
    return count, cells


def _cyclic_label(shift: tuple[int, ...]) -> str:
    return f"mu={shift[0] if len(shift) == 1 else shift}"


def _cyclic_pair(f: np.ndarray, shift: tuple[int, ...], denominator: int | None) -> PairMasses:
    q = np.roll(f, tuple(-s for s in shift), axis=tuple(range(f.ndim)))
    return PairMasses(f.ravel(), q.ravel(), _cyclic_label(shift), denominator)


# ------------------------------------------------------------------ integer forms
def integer_form(mechanism: Representation) -> IntegerForm | None:
    """The mechanism's exact masses (as :func:`neighbouring_pairs` with ``exact=True`` sees
    them) as integer weights over one denominator, or ``None`` when that denominator or a
    weight would exceed ``2^MAX_WEIGHT_BITS`` (e.g. masses spanning the whole float range,
    rationals with unrelated large denominators). Float masses are exact binary rationals
    ``odd * 2^k``: their common denominator is a power of two, found without Fractions.
    """
    if isinstance(mechanism, CyclicPMF):
        got = common_denominator(mechanism.exact, mechanism.probs)
        return None if got is None else IntegerForm("cyclic", *got)
    if isinstance(mechanism, Channel):
        got = common_denominator(mechanism.exact, mechanism.matrix)
        return None if got is None else IntegerForm("channel", *got)
    if isinstance(mechanism, IntegerPMF):
        got = common_denominator(mechanism.exact, mechanism.probs)
        tail = (lambda t: None if t is None else (Fraction(t.ratio), t.period))
        return None if got is None else IntegerForm("integer", *got, lo=mechanism.lo,
                                                    left=tail(mechanism.left_tail), right=tail(mechanism.right_tail))
    raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")


def common_denominator(values: np.ndarray | None, floats: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``(W, D)`` with integer ``W`` (``uint64`` when every weight fits, else Python ints),
    ``W / D`` equal to the exact masses (``values``, or the exact binary value of each float).
    ``None`` if ``D`` or a weight needs more than ``MAX_WEIGHT_BITS`` bits."""
    shape = np.shape(floats)
    if values is not None:
        flat = list(values.ravel())
        den = math.lcm(*{v.denominator for v in flat}) if flat else 1
        if den.bit_length() > MAX_WEIGHT_BITS:
            return None
        scale: dict[int, int] = {}
        nums = [v.numerator * scale.setdefault(v.denominator, den // v.denominator) for v in flat]
        return _weights_array(nums, shape), den
    f = np.asarray(floats, dtype=np.float64).ravel()
    out = np.zeros(f.size, dtype=np.uint64)
    nz = np.flatnonzero(f > 0)
    if nz.size == 0:
        return out.reshape(shape), 1
    m, e = np.frexp(f[nz])                       # f = m 2^e, 1/2 <= m < 1: exact
    mant = np.ldexp(m, 53).astype(np.int64)      # f = mant 2^(e - 53), mant < 2^53: exact
    low = mant & -mant                           # lowest set bit (a power of two)
    tz = np.frexp(low.astype(np.float64))[1] - 1
    odd = mant >> tz
    k = e.astype(np.int64) - 53 + tz            # f = odd 2^k, odd odd
    k0 = min(int(k.min()), 0)
    if -k0 > MAX_WEIGHT_BITS:
        return None
    shift = k - k0
    bits = np.frexp(odd.astype(np.float64))[1] + shift  # bit length of odd 2^shift
    top = int(bits.max())
    if top <= 64:
        out[nz] = odd.astype(np.uint64) << shift.astype(np.uint64)
        return out.reshape(shape), 1 << -k0
    if top > MAX_WEIGHT_BITS:
        return None
    big = np.zeros(f.size, dtype=object)
    big[nz] = np.left_shift(odd.astype(object), shift.astype(object))  # Python ints, elementwise
    return big.reshape(shape), 1 << -k0


def _weights_array(nums: list[int], shape: tuple[int, ...]) -> np.ndarray | None:
    top = max(nums, default=0)
    if top < 1 << 64:
        return np.array(nums, dtype=np.uint64).reshape(shape)
    out = np.empty(len(nums), dtype=object)
    out[:] = nums
    return out.reshape(shape)


def _integer_form_builders(form: IntegerForm, neighbourhood: Neighbourhood | InputPairs | None
                           ) -> tuple[list[PairBuilder], Neighbourhood | InputPairs]:
    if form.kind == "channel":
        nb = neighbourhood if neighbourhood is not None else Neighbourhood((1,))
        if not isinstance(nb, InputPairs):
            nb = InputPairs.from_distances(nb, form.shape[0])
        w, d = form.weights, form.denominator
        rows: dict[int, Weights] = {}

        def row(i: int) -> Weights | np.ndarray:  # a uint64 row validated and converted once
            if w.dtype == object:
                return w[i]
            if i not in rows:
                rows[i] = as_weights(w[i])
            return rows[i]

        if every_pair_of(nb, form.shape[0]):
            return EveryPair(form.shape[0], lambda a, b: (  # type: ignore[return-value]
                f"x={a},x'={b}", lambda: PairMasses(row(a), row(b), f"x={a},x'={b}", d)), not nb.directed), nb
        return [(f"x={a},x'={b}", lambda a=a, b=b: PairMasses(row(a), row(b), f"x={a},x'={b}", d))
                for a, b in nb.ordered(form.shape[0])], nb
    nb = neighbourhood if neighbourhood is not None else Neighbourhood((1,))
    if not isinstance(nb, Neighbourhood):
        raise InvalidParameterError("neighbourhood", nb, "query distances for additive noise")
    if form.kind == "cyclic":
        prepared: list[Weights] = []

        def base() -> Weights:  # validated and converted once, rolled for every pair
            if not prepared:
                prepared.append(as_weights(form.weights))
            return prepared[0]

        return [(_cyclic_label(shift), lambda shift=shift: PairMasses(
            base(), base().roll(shift, form.shape), _cyclic_label(shift), form.denominator))
                for shift in nb.cyclic_shifts(form.shape)], nb
    return [(f"mu={mu}", lambda mu=mu: _integer_form_pair(form, mu)) for mu in nb.integer_shifts()], nb


def integer_form_fits(form: IntegerForm, neighbourhood: Neighbourhood | InputPairs | None) -> bool:
    """Whether every pair of ``form`` keeps its weights below ``2^MAX_WEIGHT_BITS``.

    On the integer line a pair at distance ``mu`` multiplies the weights by ``b^T`` per side
    with tails (``T`` blocks reached, about ``(|mu| + period) / period + 1``); with many blocks
    (a large distance over a short period) the Fraction analysis is used instead.
    """
    if form.kind != "integer" or (form.left is None and form.right is None):
        return True
    if not isinstance(neighbourhood, Neighbourhood):
        return True
    reach = max(abs(m) for m in neighbourhood.integer_shifts())
    bits = form.denominator.bit_length() + max(int(w).bit_length() for w in np.asarray(form.weights).ravel()) + 2
    for tail in (form.left, form.right):
        if tail is not None:  # blocks reached beyond the window, as in _integer_form_pair
            ratio, period = tail
            blocks = -(-(2 * reach + period) // period) + 1
            bits += blocks * max(ratio.denominator.bit_length(), ratio.numerator.bit_length()) + 1
    return bits <= MAX_WEIGHT_BITS


def _integer_form_pair(form: IntegerForm, mu: int) -> PairMasses:
    """The pair ``(p, p(. + mu))`` of noise on Z in integer weights (see the module docstring).

    With tail ratios ``a / b`` and ``T`` blocks reached on a side, every mass is a weight
    over ``D b_R^T_R b_L^T_L``: a window weight ``W`` times ``b_R^T_R b_L^T_L``, a tail cell
    ``W a^t b^(T - t)`` times the other side's ``b^T``. The outermost ``period`` cells stand
    for their residue classes (weight ``1 / (1 - a/b) = b / (b - a)``): every cell is
    multiplied by ``(b - a)`` or, on a class cell, by ``b``, and the denominator by ``b - a``.

    Proof: docs/proofs/tail-classes.md.
    """
    w = form.weights
    n, lo = w.size, form.lo
    hi = lo + n - 1
    left, right = form.left, form.right
    lo_ext = lo - (abs(mu) + left[1]) if left else lo
    hi_ext = hi + (abs(mu) + right[1]) if right else hi
    if left is None and right is None:
        q = np.zeros_like(w)
        src = np.arange(n) + mu
        ok = (src >= 0) & (src < n)
        q[ok] = w[src[ok]]
        return PairMasses(w, q, f"mu={mu}", form.denominator)
    k_min, k_max = min(lo_ext, lo_ext + mu), max(hi_ext, hi_ext + mu)
    blocks_r = -(-(k_max - hi) // right[1]) if right and k_max > hi else 0
    blocks_l = -(-(lo - k_min) // left[1]) if left and k_min < lo else 0
    a_r, b_r = (right[0].numerator, right[0].denominator) if right else (0, 1)
    a_l, b_l = (left[0].numerator, left[0].denominator) if left else (0, 1)
    pow_r, pow_l = b_r ** blocks_r, b_l ** blocks_l
    raw = np.zeros(k_max - k_min + 1, dtype=object)
    at = lo - k_min
    raw[at:at + n] = np.asarray(w, dtype=object) * (pow_r * pow_l)
    for k in range(max(hi + 1, k_min), k_max + 1) if right else ():
        j = k - hi - 1
        t = j // right[1] + 1
        raw[k - k_min] = int(w[n - right[1] + j % right[1]]) * a_r ** t * b_r ** (blocks_r - t) * pow_l
    for k in range(k_min, min(lo, k_max + 1)) if left else ():
        j = lo - 1 - k
        t = j // left[1] + 1
        raw[k - k_min] = int(w[left[1] - 1 - j % left[1]]) * a_l ** t * b_l ** (blocks_l - t) * pow_r
    cells = hi_ext - lo_ext + 1
    factor = np.empty(cells, dtype=object)
    factor[:] = (b_r - a_r) * (b_l - a_l)
    if right:
        factor[-right[1]:] = b_r * (b_l - a_l)
    if left:
        factor[:left[1]] = (b_r - a_r) * b_l
    p = raw[lo_ext - k_min:lo_ext - k_min + cells] * factor
    q = raw[lo_ext + mu - k_min:lo_ext + mu - k_min + cells] * factor
    return PairMasses(p, q, f"mu={mu}", form.denominator * pow_r * pow_l * (b_r - a_r) * (b_l - a_l))


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
    """The float or Fraction pair ``(p, p(. + mu))`` of noise on Z (module docstring).

    Proof: docs/proofs/tail-classes.md.
    """
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
