"""The :class:`Mechanism` type: a representation with its neighbourhood and target, and its
whole life cycle (analysis, exact certificate, quantize, sample, apply, the file it writes).

The package's face is :mod:`optnoise.mechanism` (its docstring shows the life cycle); reading
files is :mod:`.files`, the constructors :mod:`.make`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Iterable, Literal, Sequence

import numpy as np

from ..analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
from ..analysis.pairs import default_neighbourhood
from ..errors import InvalidParameterError
from ..io import check_output, dumps, write_text_atomic
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from ..randomness import RandomSource, random_source
from ..resources import array_bytes, channel_bytes, check
from ..sampling.block_map import BlockMap
from ..sampling.clamp_remap import ClampRemap
from ..seeded import warn_not_private
from ..target import Target

#: A dense channel with more entries than this is summarised in a report (its file lists it).
LISTED_UP_TO = 1_000_000

#: The ``format`` key of a mechanism file and its version.
SCHEMA = "optnoise.mechanism"
SCHEMA_VERSION = 1
Kind = Literal["cyclic", "integer", "channel"]


class Draws(np.ndarray):
    """Integer draws (a numpy array) that remember whether their randomness was private.

    ``private`` is ``False`` for a seeded generator: reproducible, and not private.
    """

    private: bool
    randomness: str

    def __array_finalize__(self, obj: Any) -> None:
        self.private = getattr(obj, "private", True)
        self.randomness = getattr(obj, "randomness", "")


def _draws(values: np.ndarray, source: RandomSource) -> Draws:
    out = np.asarray(values).view(Draws)
    out.private = bool(source.private)
    out.randomness = source.description
    return out


@dataclass(frozen=True)
class MechanismFile:
    """Where a mechanism was read from: the path as given and the SHA-256 (hex) of the bytes
    that were parsed (a release manifest records both without reading the file again)."""

    path: str
    sha256: str


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A releasable mechanism under a neighbourhood, optionally with its target.

    Attributes
    ----------
    pmf:
        Cyclic noise (:class:`CyclicPMF`), noise on the integer line
        (:class:`IntegerPMF`, window plus exact tails) or a :class:`Channel`.
    neighbourhood:
        Query distances for additive noise; input pairs for a channel (query distances
        given for a channel become the pairs ``q - q'`` in ``M``, without wrap-around).
    target:
        The ``(epsilon, delta, notion)`` the mechanism was made for; quantizing keeps it
        exactly. ``None``: no target (the exact certificate is reported as it is).
    name:
        A label for reports.
    origin:
        The file it was read from, with the SHA-256 of the bytes parsed
        (:func:`load_mechanism`); ``None`` for a mechanism made in memory.
    blocks:
        A channel whose rows repeat over intervals of the answers ``0..n`` (block randomized
        response, :mod:`optnoise.design.record_blocks`): ``pmf`` is its core (one row per
        interval, one column per released value) and ``blocks`` maps each answer to its row
        and each column to its value (:class:`~optnoise.sampling.block_map.BlockMap`). The
        neighbourhood is then over the core's rows; the complete graph on them is every pair
        of answers (docs/proofs/record-blocks.md, claim 3).
    release:
        Noise on the integer line released on ``{0..n}`` as ``remap(clip(q + eta, 0, n))``
        (:class:`~optnoise.sampling.clamp_remap.ClampRemap`; the geometric-plus-remap channel,
        :mod:`optnoise.design.geometric_remap`): ``pmf`` is the noise, certified and sampled as
        noise under ``neighbourhood``; answers are ``0..n``. Post-processing keeps the noise's
        pure and approximate-DP certificate (docs/proofs/geometric-remap.md, claim 3).
    """

    pmf: CyclicPMF | IntegerPMF | Channel
    neighbourhood: Neighbourhood | InputPairs
    target: Target | None = None
    name: str = "custom"
    origin: "MechanismFile | None" = None
    blocks: BlockMap | None = None
    release: ClampRemap | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.pmf, (CyclicPMF, IntegerPMF, Channel)):
            raise InvalidParameterError("pmf", type(self.pmf).__name__, "a CyclicPMF, IntegerPMF or Channel")
        if self.target is not None and not isinstance(self.target, Target):
            raise InvalidParameterError("target", self.target, "a Target(epsilon, delta, notion) or None")
        if self.blocks is not None:
            if not isinstance(self.pmf, Channel) or not isinstance(self.blocks, BlockMap):
                raise InvalidParameterError("blocks", type(self.blocks).__name__, "a BlockMap, with a channel")
            self.blocks.check(self.pmf.matrix.shape)
        if self.release is not None and not (isinstance(self.pmf, IntegerPMF) and isinstance(self.release, ClampRemap)):
            raise InvalidParameterError("release", type(self.release).__name__, "a ClampRemap, with noise on the "
                                        "integer line")
        nb = default_neighbourhood(self.pmf, self.neighbourhood)
        if isinstance(self.pmf, CyclicPMF):
            nb.cyclic_shifts(self.pmf.shape)  # type: ignore[union-attr]  # validates distances against the domain
        elif isinstance(self.pmf, IntegerPMF):
            nb.integer_shifts()  # type: ignore[union-attr]
        else:
            nb.ordered(self.pmf.n_inputs)  # type: ignore[union-attr]
        object.__setattr__(self, "neighbourhood", nb)

    def replace(self, **changes: Any) -> "Mechanism":
        """The same mechanism with some fields changed (its block map and release kept unless
        changed)."""
        from dataclasses import replace
        return replace(self, **changes)

    # ---------------------------------------------------------------- analysis
    @property
    def kind(self) -> Kind:
        """``"cyclic"``, ``"integer"`` or ``"channel"``."""
        return "cyclic" if isinstance(self.pmf, CyclicPMF) else "integer" if isinstance(self.pmf, IntegerPMF) \
            else "channel"

    @cached_property
    def privacy(self) -> PrivacyProfile:
        """Tight privacy profile in floating point; see :meth:`certify` for exact values."""
        return privacy_profile(self.pmf, self.neighbourhood)

    def certify(self, *, max_memory: int | None = None) -> PrivacyProfile:
        """Exact profile of these masses: rational arithmetic, every value rounded outward
        (``max_memory``: :func:`optnoise.analysis.privacy_profile`)."""
        return privacy_profile(self.pmf, self.neighbourhood, exact=True, max_memory=max_memory)

    def verify(self, *, epsilon: float | None = None, delta: float | None = None,
               exact: bool = False) -> Guarantee:
        """``epsilon_pure``, ``delta_dp``/``delta_pdp`` at ``epsilon``, ``epsilon_dp``/``epsilon_pdp`` at ``delta``."""
        return guarantee(self.certify() if exact else self.privacy, epsilon, delta)

    def meets(self, target: Target | None = None, *, exact: bool = False) -> bool:
        """Whether the mechanism meets ``target`` (default: its own), by the one rule
        :meth:`PrivacyProfile.meets`."""
        t = target if target is not None else self.target
        if t is None:
            raise InvalidParameterError("target", None, "a Target (the mechanism has none of its own)")
        return (self.certify() if exact else self.privacy).meets(t)

    def compose(self, k: int, *, epsilon: float | None = None, delta: float | None = None,
                max_memory: int | None = None):
        """Guarantee after ``k`` releases: the best of the exact binomial/multinomial sum,
        dp_accounting PLDs, RDP and the pure and basic bounds, every one proven (``.bound``
        says which won, ``.exact`` whether the value is exact); see
        :func:`optnoise.analysis.composition.compose`. The pairs composed are those of the
        exact profile (:meth:`certify`): the mechanism's masses exactly."""
        from ..analysis.composition import compose
        return compose(self.certify(max_memory=max_memory), k, epsilon=epsilon, delta=delta, max_memory=max_memory)

    def tradeoff(self, *, exact: bool = False, max_memory: int | None = None):
        """The trade-off curve of the best attacker (:func:`optnoise.analysis.tradeoff.tradeoff`):
        exact vertices and readouts rounded up with ``exact``, float otherwise."""
        from ..analysis.tradeoff import tradeoff
        return tradeoff(self.pmf, self.neighbourhood, exact=exact, max_memory=max_memory)

    def attack(self, *, fprs: Iterable[float] | None = None, prior_odds: float = 1.0, exact: bool = False,
               releases: int = 1, max_memory: int | None = None):
        """What the best attacker can learn (docs/attacks.md): an
        :class:`~optnoise.analysis.tradeoff.AttackReadout` -- its true-positive rate at each
        false-positive rate of ``fprs`` (default 0.001, 0.01, 0.05, 0.1), the advantage, the
        Gaussian-DP mu and the largest posterior from prior odds ``prior_odds : 1``.

        ``releases > 1``: after that many independent releases (the exact composition where
        it fits, else a dominating lower bound of the curve; ``.method`` says which).

        >>> import optnoise
        >>> r = optnoise.geometric(epsilon=1.0).attack(exact=True)
        >>> round(r.tpr_at_fpr[0.05], 4), round(r.mu_gdp, 4)
        (0.1359, 1.232)
        """
        from ..analysis.tradeoff import DEFAULT_FPRS
        from ..analysis.tradeoff_composition import compose_tradeoff
        if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
            raise InvalidParameterError("releases", releases, "an integer >= 1")
        if releases == 1:
            curve = self.tradeoff(exact=exact, max_memory=max_memory)
        else:
            curve = compose_tradeoff([(self.certify(max_memory=max_memory) if exact else self.privacy, int(releases))])
        return curve.readout(DEFAULT_FPRS if fprs is None else fprs, prior_odds)

    # ------------------------------------------------------------ quantize/sample
    @cached_property
    def _quantized(self):
        from ..sampling import quantize
        self._check_target()
        return quantize(self.pmf, self.neighbourhood, target=self.target)

    def quantize(self, bits: int | None = None):
        """The integer-weight form that is sampled, with the exact certificate of those
        weights (:func:`optnoise.sampling.quantize`); cached for the default ``bits``.

        Raises
        ------
        InvalidParameterError
            The masses miss the mechanism's target (no quantization can mend that), naming
            what they give.
        """
        if bits is None:
            return self._quantized
        from ..sampling import quantize
        self._check_target()
        return quantize(self.pmf, self.neighbourhood, target=self.target, bits=bits)

    def _check_target(self) -> None:
        """A target the masses miss is bad input (``target``), said in the user's terms: what
        the mechanism gives and by how much it misses."""
        t = self.target
        if t is None or self.privacy.meets(t):
            return
        prof = self.privacy
        if t.notion == "attack":
            gives = f"its exact trade-off curve misses {t.describe()}"
        elif t.pure:
            e = prof.epsilon_pure
            ratio = f" = ln {math.exp(e):.6g}" if math.isfinite(e) and e < 700 else ""
            gives = (f"it gives pure eps {e:.6g}{ratio} > {t.epsilon:g} (the output probabilities of neighbouring "
                     f"answers differ by a factor up to e^{e:.6g}, the target allows e^{t.epsilon:g})")
        else:
            gives = (f"it gives delta {prof.delta(t.epsilon, t.notion):.6g} > {t.delta:g} at eps {t.epsilon:g} "
                     f"({t.notion.upper()})")
        shown = t.epsilon if t.epsilon is not None else t.describe()
        name = "target" if t.notion != "attack" else "max_tpr" if t.max_tpr is not None else "max_mu"
        raise InvalidParameterError(name, shown, f"a target this mechanism ({self.name}) meets: {gives}, so "
                                    "optnoise cannot quantize it to weights that do; raise the target, or use a "
                                    "mechanism made for it")

    def sample(self, count: int, *, seed: int | None = None, source: RandomSource | None = None,
               answer: int | None = None, max_memory: int | None = None) -> Draws:
        """``count`` draws, exactly from the quantized, certified weights.

        Additive noise: the noise values (cyclic: ``0..n``, shape ``(count, d)`` for a
        vector domain; integer line: integers). Channel: the outputs for the true
        ``answer`` (an input index). Randomness: the OS CSPRNG, or a seeded stream
        with ``seed`` (the result is then marked ``private = False`` and a
        :class:`~optnoise.seeded.NotPrivateWarning` is issued: not private, anyone who knows
        or guesses the seed can remove the noise). ``max_memory`` bounds
        the draws held at once (:mod:`optnoise.resources`; about 64 bytes per draw).
        """
        from ..sampling.words import check_count
        n = check_count(count)
        check(array_bytes(n, 8, copies=8), parameter="count", value=count, what=f"{n} draws", max_memory=max_memory)
        if self.kind == "channel" or self.release is not None:
            if answer is None:
                raise InvalidParameterError("answer", None, "the true answer (an input index) to sample a channel")
            row = int(self.answers([answer], parameter="answer")[0])
        elif answer is not None:
            raise InvalidParameterError("answer", answer, "no answer for additive noise: sample draws the noise "
                                        "itself (to privatize answers: Mechanism.apply, or 'optnoise release' on a "
                                        "file)")
        src = source if source is not None else random_source(seed)
        warn_not_private(src, "Mechanism.sample")
        q = self.quantize()
        if self.kind == "channel":
            return _draws(self._released(q.draw_outputs(np.full(n, self._row(row)), src)), src)
        draws = q.draw(n, src)
        if self.release is not None:   # post-processing of the noise (docs/proofs/geometric-remap.md, claim 3)
            return _draws(self.release.released(draws + row), src)
        if self.kind == "cyclic" and len(q.shape) > 1:
            draws = np.stack(np.unravel_index(draws, q.shape), axis=-1)
        return _draws(draws, src)

    def apply(self, values: Sequence[int] | np.ndarray, *, seed: int | None = None,
              source: RandomSource | None = None) -> Draws:
        """Privatize true answers: ``(q + eta) mod (n + 1)`` (cyclic, domain indices
        ``0..n``), ``q + eta`` (integer line) or a draw from row ``q`` (channel)."""
        q_values = self.answers(values)
        src = source if source is not None else random_source(seed)
        warn_not_private(src, "Mechanism.apply")
        quantized = self.quantize()
        if self.kind == "channel":
            return _draws(self._released(quantized.draw_outputs(self._row(q_values), src)), src)
        noise = quantized.draw(q_values.shape[0] if q_values.ndim else 1, src)
        if self.kind == "integer":
            shifted = q_values + noise.reshape(q_values.shape)
            return _draws(shifted if self.release is None else self.release.released(shifted), src)
        shape = quantized.shape
        if len(shape) > 1:
            noise2 = np.stack(np.unravel_index(noise, shape), axis=-1)
            return _draws((q_values + noise2) % np.asarray(shape), src)
        return _draws((q_values + noise.reshape(q_values.shape)) % shape[0], src)

    def _row(self, answers: np.ndarray | int) -> np.ndarray | int:
        """The channel's row of each (checked) answer: itself, or its interval's (``blocks``).
        Proof: docs/proofs/record-blocks.md (claim 3)."""
        if self.blocks is None:
            return answers
        rows = self.blocks.rows_of(np.asarray(answers, dtype=np.int64))
        return int(rows) if np.ndim(rows) == 0 else rows

    def _released(self, columns: np.ndarray) -> np.ndarray:
        """The released value of each drawn column: itself, or its value (``blocks``)."""
        return columns if self.blocks is None else self.blocks.released(columns)

    @property
    def n_answers(self) -> int | None:
        """A channel's number of answers (its inputs, or ``blocks.answers``; ``release.answers``
        for noise released on ``{0..n}``); ``None`` for noise."""
        if self.release is not None:
            return self.release.answers
        if self.kind != "channel":
            return None
        return self.blocks.answers if self.blocks is not None else self.pmf.n_inputs  # type: ignore[union-attr]

    def answers(self, values: Sequence[int] | np.ndarray | int, *, parameter: str = "values") -> np.ndarray:
        """True answers checked against the domain, as int64: integers (an integral float such
        as ``3.0`` too; never NaN, infinity, ``1.7``, text or a bool) in ``0..n`` (cyclic:
        shape ``(m, d)`` for a vector domain; channel: ``0..inputs - 1``) or, on the integer
        line, within ``+-2^62`` (so that adding noise cannot overflow)."""
        arr = np.asarray(values)
        if arr.dtype.kind not in "iuf":
            raise InvalidParameterError(parameter, _first(arr), "integer answers (not text or true/false)")
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if np.any(bad):
                at = f"; this one is at position {int(np.flatnonzero(bad.ravel())[0])}" if arr.size > 1 else ""
                raise InvalidParameterError(parameter, _first(arr[bad]), f"integer answers (no NaN, inf or fractions "
                                            f"such as 1.7{at})")
        if self.release is not None:
            lo, hi = 0, self.release.n
            where = f"in 0..{hi} (the answers of noise released on 0..{hi})"
        elif self.kind == "integer":
            lo, hi = -(2**62), 2**62
            where = "within +-2^62 (noise on the integer line is added to them)"
        elif self.kind == "channel":
            lo, hi = 0, int(self.n_answers) - 1  # type: ignore[arg-type]
            where = f"in 0..{hi} (the channel's input indices)"
        else:
            shape = self.pmf.shape  # type: ignore[union-attr]
            if len(shape) > 1 and (arr.ndim != 2 or arr.shape[1] != len(shape)):
                raise InvalidParameterError(parameter, f"shape {arr.shape}", f"answers of shape (m, {len(shape)}) for "
                                            f"a domain of shape {shape}")
            lo, hi = 0, (np.asarray(shape) - 1 if len(shape) > 1 else shape[0] - 1)
            where = f"in 0..{self.pmf.n} (the domain's indices; noise is added mod n + 1)"  # type: ignore[union-attr]
        out_of = (arr < lo) | (arr > hi)
        if np.any(out_of):
            raise InvalidParameterError(parameter, _first(arr[out_of]), f"integer answers {where}")
        return arr.astype(np.int64)

    # ------------------------------------------------------------------- files
    @property
    def listed(self) -> bool:
        """Whether :meth:`to_json` lists the masses: always, but a dense channel of more than
        :data:`LISTED_UP_TO` entries is summarised by ``to_json(summary=True)`` (a report)."""
        return not (isinstance(self.pmf, Channel) and self.blocks is None and self.pmf.matrix.size > LISTED_UP_TO)

    def to_json(self, *, summary: bool = False) -> dict:
        """The mechanism-file object (``format`` ``optnoise.mechanism``, version 1); ``summary``:
        a large dense channel (not :attr:`listed`) as its shape only, for a report."""
        out: dict[str, Any] = {"format": SCHEMA, "format_version": SCHEMA_VERSION, "kind": self.kind,
                               "name": self.name}
        p = self.pmf
        if summary and not self.listed:
            out.update({"channel": None, "channel_shape": list(p.matrix.shape), "exact": None,  # type: ignore[union-attr]
                        "neighbourhood": self.neighbourhood.to_json(),
                        "target": None if self.target is None else self.target.to_json()})
            return out
        if isinstance(p, CyclicPMF):
            out["pmf"] = p.probs.tolist()
            out["shape"] = list(p.shape)
            exact = p.exact
        elif isinstance(p, IntegerPMF):
            out["pmf"] = p.probs.tolist()
            out["offset"] = p.offset
            out["left_tail"] = _tail_json(p.left_tail)
            out["right_tail"] = _tail_json(p.right_tail)
            if self.release is not None:
                out["release"] = self.release.to_json()
            exact = p.exact
        else:
            out["channel"] = p.matrix.tolist()
            if self.blocks is not None:
                out["blocks"] = self.blocks.to_json()
            exact = p.exact
        out["exact"] = None if exact is None else [str(Fraction(v)) for v in exact.ravel()]
        out["neighbourhood"] = self.neighbourhood.to_json()
        out["target"] = None if self.target is None else self.target.to_json()
        return out

    def save(self, path: str | os.PathLike, *, report: dict | None = None, force: bool = False,
             reads: Iterable[str | os.PathLike] = ()) -> None:
        """Write the mechanism file atomically; ``report`` keys (a design's figures) are
        stored beside the schema keys and ignored when loading.

        The output rule (:func:`optnoise.io.check_output`): an existing file is replaced
        only with ``force``, a file in ``reads`` never.
        """
        check_output(path, force=force, reads=reads)
        if not self.listed:   # every entry in JSON: Python floats, then text
            check(channel_bytes(*self.pmf.matrix.shape, copies=16), parameter="output", value=str(path),  # type: ignore[union-attr]
                  what=f"the mechanism file of a channel with {self.pmf.matrix.size:.3g} entries listed in JSON")  # type: ignore[union-attr]
        payload = {**(report or {}), **self.to_json()}
        write_text_atomic(path, dumps(payload), replace=force)


def _first(arr: np.ndarray) -> Any:
    """The first value of an array, as a plain Python value for a message."""
    flat = np.asarray(arr).ravel()
    return flat[0].item() if flat.size and hasattr(flat[0], "item") else (flat[0] if flat.size else None)


def _tail_json(tail: GeometricTail | None) -> dict | None:
    return None if tail is None else {"ratio": tail.ratio, "period": tail.period}


__all__ = ["LISTED_UP_TO", "SCHEMA", "SCHEMA_VERSION", "Draws", "Kind", "Mechanism", "MechanismFile"]
