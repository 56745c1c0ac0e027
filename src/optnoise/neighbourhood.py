"""Neighbourhoods: which pairs of query answers come from neighbouring datasets.

For additive noise only differences matter: a set ``M`` of query distances
``mu = Q(X) - Q(X')`` (Kadam et al. 2024, eq. (6)). For the ordered pair
``(X, X')`` the two output distributions are ``f(eta)`` and ``f(eta + mu)`` with
``eta = y - Q(X)`` (Kadam eq. (7)-(8)). Named cases (Kadam Defs. 5-7): single
distance (SD, ``M = {mu_hat}``), bounded difference (BD, ``M = {1..mu_bar}``),
arbitrary sets, and per-coordinate tuples for vector queries.

*Symmetric* (default) means neighbours are unordered, so ``M`` is closed under
negation (modulo ``n + 1`` on a cyclic domain). *Directed* uses exactly the listed
distances, the convention of Kadam et al.'s Table 1 and Figs. 9-12.
For channels a neighbourhood is a set of ordered input pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

from .errors import InvalidParameterError
from .resources import check, distances_bytes

Distance = int | tuple[int, ...]


def _normalise_distance(d: object) -> Distance:
    if isinstance(d, (tuple, list)):
        if len(d) == 0:
            raise InvalidParameterError("distances", d, "integers or non-empty integer tuples")
        if len(d) == 1:
            return _normalise_distance(d[0])
        return tuple(_normalise_distance(x) for x in d)  # type: ignore[misc]
    try:
        as_int = int(d)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError("distances", d, "integers (query distances mu)") from exc
    if as_int != d:
        raise InvalidParameterError("distances", d, "integers (query distances mu)")
    return as_int


@dataclass(frozen=True)
class Neighbourhood:
    """A set of query distances ``mu`` for additive noise.

    Parameters
    ----------
    distances:
        The distances as given (integers, or tuples for vector queries).
    directed:
        ``False`` (default): neighbours are unordered and ``-mu`` is added for each
        ``mu``. ``True``: exactly the listed ordered distances.
    """

    distances: tuple[Distance, ...]
    directed: bool = False

    def __post_init__(self) -> None:
        ds = tuple(_normalise_distance(d) for d in self.distances)
        if not ds:
            raise InvalidParameterError("distances", [], "at least one query distance")
        kinds = {isinstance(d, tuple) for d in ds}
        if len(kinds) > 1:
            raise InvalidParameterError("distances", list(ds), "all scalars or all tuples of one length")
        if True in kinds and len({len(d) for d in ds}) > 1:  # type: ignore[arg-type]
            raise InvalidParameterError("distances", list(ds), "tuples of one length")
        for d in ds:
            if (d == 0) if isinstance(d, int) else all(x == 0 for x in d):
                raise InvalidParameterError("distances", d, "non-zero query distances")
        object.__setattr__(self, "distances", tuple(dict.fromkeys(ds)))

    # ----------------------------------------------------------------- builders
    @classmethod
    def sd(cls, mu: int, *, directed: bool = False) -> "Neighbourhood":
        """Single distance ``M = {mu}`` (Kadam Def. 5)."""
        return cls((mu,), directed)

    @classmethod
    def bd(cls, mu_bar: int, *, directed: bool = False, max_memory: int | None = None) -> "Neighbourhood":
        """Bounded difference ``M = {1..mu_bar}`` (Kadam Def. 6); ``max_memory`` bounds the
        distances held (:mod:`optnoise.resources`)."""
        if isinstance(mu_bar, bool) or int(mu_bar) != mu_bar or mu_bar < 1:
            raise InvalidParameterError("bd", mu_bar, "an integer mu_bar >= 1")
        check(distances_bytes(mu_bar), parameter="bd", value=mu_bar, what=f"a neighbourhood of {int(mu_bar)} distances",
              max_memory=max_memory)
        return cls(tuple(range(1, int(mu_bar) + 1)), directed)

    @classmethod
    def sensitivity(cls, bound: int = 1, *, directed: bool = False) -> "Neighbourhood":
        """Sensitivity ``Delta = bound``: ``|Q(X) - Q(X')| <= bound``, i.e. ``BD(bound)`` (the
        argument is the bound on the change of the answer, not a DP delta)."""
        return cls.bd(bound, directed=directed)

    # ------------------------------------------------------------------ queries
    @property
    def dimension(self) -> int:
        """1 for scalar distances, the tuple length for vector distances."""
        d = self.distances[0]
        return 1 if isinstance(d, int) else len(d)

    def integer_shifts(self) -> list[int]:
        """Ordered shifts for noise on ``Z``: ``M``, plus ``-M`` when symmetric."""
        if self.dimension != 1:
            raise InvalidParameterError("distances", list(self.distances), "scalar distances on the integer line")
        out: list[int] = list(self.distances)  # type: ignore[arg-type]
        if not self.directed:
            out += [-d for d in out]
        return sorted(dict.fromkeys(out))

    def cyclic_shifts(self, shape: int | Sequence[int]) -> list[tuple[int, ...]]:
        """Ordered shifts modulo the domain ``shape`` (``n + 1`` per axis).

        Every coordinate must lie in ``-n_i..n_i`` and a distance may not vanish
        modulo the domain. Symmetric neighbourhoods add ``-mu mod (n + 1)``.
        """
        shp = (int(shape),) if isinstance(shape, (int,)) else tuple(int(s) for s in shape)
        if min(shp) < 2:
            raise InvalidParameterError("pmf", shp[0] if len(shp) == 1 else shp,
                                        "at least 2 masses (per coordinate): on a domain of one value no two answers "
                                        "differ, so there is nothing to protect")
        if len(shp) != self.dimension:
            raise InvalidParameterError(
                "distances", list(self.distances),
                f"{len(shp)}-dimensional distances for a domain of shape {shp}")
        out: list[tuple[int, ...]] = []
        for d in self.distances:
            vec = (d,) if isinstance(d, int) else d
            for x, s in zip(vec, shp):
                if not -(s - 1) <= x <= s - 1:
                    raise InvalidParameterError(
                        "distances", d, f"distances with each coordinate in -{s - 1}..{s - 1} (domain size {s})")
            red = tuple(x % s for x, s in zip(vec, shp))
            if all(x == 0 for x in red):
                raise InvalidParameterError("distances", d, "distances that are non-zero modulo the domain size")
            out.append(red)
            if not self.directed:
                out.append(tuple((-x) % s for x, s in zip(vec, shp)))
        return list(dict.fromkeys(out))

    def to_json(self) -> dict:
        """``{"distances": [...], "directed": bool}`` (docs/cli.md)."""
        ds = [list(d) if isinstance(d, tuple) else d for d in self.distances]
        return {"distances": ds, "directed": self.directed}

    @classmethod
    def from_json(cls, data: dict) -> "Neighbourhood":
        """Inverse of :meth:`to_json`."""
        if not isinstance(data, dict) or not isinstance(data.get("distances"), list):
            raise InvalidParameterError("neighbourhood", data, "an object with key 'distances' (a list)")
        ds = tuple(tuple(d) if isinstance(d, list) else d for d in data["distances"])
        return cls(ds, bool(data.get("directed", False)))

    def describe(self) -> str:
        ds = ", ".join(str(d) for d in self.distances)
        return f"{{{ds}}} ({'directed' if self.directed else 'symmetric'})"


def as_neighbourhood(value: object, *, parameter: str = "neighbourhood") -> "Neighbourhood":
    """The one check of a ``neighbourhood=`` argument: a :class:`Neighbourhood`, a list of query
    distances (``[1, 2]``), or ``None`` for SD 1 (symmetric); anything else is refused."""
    accepted = "a Neighbourhood (e.g. Neighbourhood.sd(1), Neighbourhood.bd(3)), a list of query distances " \
               "like [1, 2], or None (SD 1)"
    if value is None:
        return Neighbourhood.sd(1)
    if isinstance(value, Neighbourhood):
        return value
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidParameterError(parameter, value, accepted)
    try:
        return Neighbourhood(tuple(value))  # type: ignore[arg-type]
    except InvalidParameterError as exc:
        raise InvalidParameterError(parameter, value, f"{accepted}: {exc.accepted}") from exc


@dataclass(frozen=True)
class InputPairs:
    """Neighbouring input pairs of a channel (a graph on the input indices).

    Parameters
    ----------
    pairs:
        Pairs ``(x, x')`` of input indices.
    directed:
        ``False`` (default) adds ``(x', x)`` for every ``(x, x')``.
    """

    pairs: tuple[tuple[int, int], ...]
    directed: bool = False

    def __post_init__(self) -> None:
        if self._plain():
            return
        clean: list[tuple[int, int]] = []
        for p in self.pairs:
            try:
                a, b = (int(p[0]), int(p[1]))
            except (TypeError, ValueError, IndexError) as exc:
                raise InvalidParameterError("pairs", p, "pairs of input indices (x, x')") from exc
            if a == b:
                raise InvalidParameterError("pairs", p, "pairs of distinct inputs")
            clean.append((a, b))
        if not clean:
            raise InvalidParameterError("pairs", [], "at least one neighbouring input pair")
        object.__setattr__(self, "pairs", tuple(dict.fromkeys(clean)))

    def _plain(self) -> bool:
        """The vectorised check of a large tuple of distinct ``(int, int)`` tuples with no
        ``(x, x)`` (the per-record unit lists ``n (n + 1)`` of them): ``True`` when the pairs
        are already what the loop of :meth:`__post_init__` would make of them (2-tuples of
        Python ints, in the same order, no duplicate to drop); ``False`` sends them to the
        loop, which names the first bad pair."""
        import numpy as np

        pairs = self.pairs
        if not isinstance(pairs, tuple) or len(pairs) < 4096 or type(pairs[0]) is not tuple \
                or type(pairs[0][0]) is not int:
            return False
        try:
            arr = np.array(pairs, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            return False
        if arr.ndim != 2 or arr.shape[1] != 2 or np.any(arr[:, 0] == arr[:, 1]):
            return False
        low = int(arr.min())
        span = int(arr.max()) - low + 1
        if span > 1 << 31:
            return False
        keys = (arr[:, 0] - low) * span + (arr[:, 1] - low)
        if not np.all(keys[1:] > keys[:-1]):   # listed in order (the complete graph is): distinct
            keys = np.sort(keys)
            if np.any(keys[1:] == keys[:-1]):
                return False
        if not all(type(p) is tuple and type(p[0]) is int and type(p[1]) is int  # noqa: E721 (exactly int, not bool)
                   for p in pairs):   # every pair a 2-tuple (the array above has checked the length)
            return False
        self.__dict__["array"] = arr
        return True

    @cached_property
    def array(self) -> "np.ndarray":
        """The pairs as an ``(m, 2)`` int64 array (computed once)."""
        import numpy as np

        return np.array(self.pairs, dtype=np.int64).reshape(-1, 2)

    @classmethod
    def from_distances(cls, neighbourhood: Neighbourhood, n_inputs: int) -> "InputPairs":
        """Pairs ``(q, q')`` of inputs in ``0..n_inputs-1`` with ``q - q'`` in ``M``.

        This is the neighbourhood of a non-cyclic mechanism on ``{0..n}`` such as
        clamped noise (Kadam eq. (56)): no wrap-around.
        """
        pairs = [(q, q - mu) for mu in neighbourhood.integer_shifts() for q in range(n_inputs)
                 if 0 <= q - mu < n_inputs]
        if not pairs:
            raise InvalidParameterError("distances", list(neighbourhood.distances),
                                        f"distances smaller than the number of inputs {n_inputs}")
        return cls(tuple(pairs), directed=True)

    @classmethod
    def complete(cls, n_inputs: int, *, directed: bool = False) -> "InputPairs":
        """Every pair of distinct inputs of ``0..n_inputs-1``: the per-record unit of a channel.

        Symmetric (default): ``(a, b)`` with ``a < b``. ``directed``: every ordered pair,
        ``(a, b)`` for every ``a``, then every ``b != a`` (the order the channel LP lists them).
        """
        if isinstance(n_inputs, bool) or int(n_inputs) != n_inputs or n_inputs < 2:
            raise InvalidParameterError("n", n_inputs - 1, "an integer n >= 1 (domain {0..n})")
        k = int(n_inputs)
        pairs = ((a, b) for a in range(k) for b in range(k) if (a != b if directed else a < b))
        return cls(tuple(pairs), directed=directed)

    def covers_all(self, n_inputs: int) -> bool:
        """Whether the pairs are every pair of distinct inputs of ``0..n_inputs-1`` (the
        per-record unit), in either form. The pairs are distinct and never ``(x, x)``, so
        once every index is in range a count of ``k (k - 1)`` ordered pairs (``k (k - 1) / 2``
        unordered, counted as sets) is the complete graph."""
        import numpy as np

        k = int(n_inputs)
        if k < 2 or len(self.pairs) < (k * (k - 1) if self.directed else k * (k - 1) // 2):
            return False
        arr = self.array
        if arr.min() < 0 or arr.max() >= k:
            return False
        if self.directed:
            return len(self.pairs) == k * (k - 1)
        lo, hi = np.minimum(arr[:, 0], arr[:, 1]), np.maximum(arr[:, 0], arr[:, 1])
        return int(np.unique(lo * k + hi).size) == k * (k - 1) // 2

    def to_json(self) -> dict:
        """``{"pairs": [[x, x'], ...], "directed": bool}``."""
        return {"pairs": self._listed, "directed": self.directed}

    @cached_property
    def _listed(self) -> list[list[int]]:
        """The pairs as lists, made once (a per-record file writes a million of them three
        times); callers must not change it."""
        return self.array.tolist()

    @classmethod
    def from_json(cls, data: dict) -> "InputPairs":
        """Inverse of :meth:`to_json`."""
        if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
            raise InvalidParameterError("neighbourhood", data, "an object with key 'pairs' (a list of [x, x'])")
        return cls(tuple(tuple(p) for p in data["pairs"]), bool(data.get("directed", False)))

    def describe(self) -> str:
        return f"{len(self.pairs)} {'ordered' if self.directed else 'unordered'} input pairs"

    def ordered(self, n_inputs: int) -> list[tuple[int, int]]:
        """Ordered pairs, both directions when symmetric, validated against ``n_inputs``."""
        arr = self.array
        if self.directed and len(self.pairs) and int(arr.min()) >= 0 and int(arr.max()) < n_inputs:
            return list(self.pairs)   # distinct already (__post_init__), every index in range
        out: list[tuple[int, int]] = []
        for a, b in self.pairs:
            for x in (a, b):
                if not 0 <= x < n_inputs:
                    raise InvalidParameterError("pairs", (a, b), f"input indices in 0..{n_inputs - 1}")
            out.append((a, b))
            if not self.directed:
                out.append((b, a))
        return list(dict.fromkeys(out))


def parse_distances(text: str, *, max_memory: int | None = None) -> tuple[Distance, ...]:
    """Parse ``"1,2,3"``, ``"1..3"`` or ``"1,0;2,0;0,1"`` (vector tuples); ``max_memory``
    bounds the distances a range may expand to (:mod:`optnoise.resources`)."""
    text = text.strip()
    if not text:
        raise InvalidParameterError("distances", text, "a list like 1,2,3 or 1..3 or 1,0;0,1")
    try:
        if ";" in text:
            return tuple(tuple(int(x) for x in part.split(",")) for part in text.split(";") if part.strip())
        out: list[int] = []
        for part in text.split(","):
            part = part.strip()
            if ".." in part:
                a, b = part.split("..")
                count = int(b) - int(a) + 1
                check(distances_bytes(count + len(out)), parameter="distances", value=text,
                      what=f"a neighbourhood of {count} distances", max_memory=max_memory)
                out.extend(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
        return tuple(out)
    except InvalidParameterError:
        raise
    except ValueError as exc:
        raise InvalidParameterError("distances", text, "a list like 1,2,3 or 1..3 or 1,0;0,1") from exc
