"""One type for everything that can be released: :class:`Mechanism`.

A mechanism is a representation (noise on the cycle ``{0..n}``, noise on the integer
line, or a channel) together with its neighbourhood and, optionally, the target it
was made for. It carries its whole life cycle::

    >>> import optnoise
    >>> mech = optnoise.additive([0.6, 0.2, 0.2], sensitivity=1)   # cyclic {0,1,2}
    >>> round(mech.privacy.epsilon_pure, 6)                        # float analysis
    1.098612
    >>> mech.certify().epsilon_pure >= mech.privacy.epsilon_pure    # exact, rounded up
    True
    >>> g = optnoise.geometric(epsilon=1.0)
    >>> round(g.privacy.delta_dp(0.5), 6)
    0.287649
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     draws = g.sample(3, seed=7)    # seeded: reproducible, NOT private, and it warns
    >>> draws.private, draws.shape, seen[0].category.__name__
    (False, (3,), 'NotPrivateWarning')

``.privacy`` is the tight float analysis; ``.certify()`` the exact one (rational,
outward rounded); ``.quantize()`` the integer-weight form that is actually sampled,
with the exact certificate of *those* weights; ``.sample`` and ``.apply`` draw from
it (the operating system's CSPRNG unless seeded). ``.save`` and
:func:`load_mechanism` use one versioned JSON schema for every kind
(docs/cli.md, "Mechanism files").

Keyword names follow other DP libraries: ``epsilon=``, ``delta=``, ``sensitivity=``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Sequence

import numpy as np

from .analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
from .analysis.pairs import default_neighbourhood
from .errors import InvalidParameterError, ResourceLimitError, one_line, show_value
from .io import check_output, dumps, read_pmf_file, write_text_atomic
from .neighbourhood import Distance, InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from .randomness import RandomSource, random_source
from .resources import array_bytes, check
from .sampling.block_map import BlockMap
from .seeded import warn_not_private
from .target import Target

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
    """

    pmf: CyclicPMF | IntegerPMF | Channel
    neighbourhood: Neighbourhood | InputPairs
    target: Target | None = None
    name: str = "custom"
    origin: "MechanismFile | None" = None
    blocks: BlockMap | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.pmf, (CyclicPMF, IntegerPMF, Channel)):
            raise InvalidParameterError("pmf", type(self.pmf).__name__, "a CyclicPMF, IntegerPMF or Channel")
        if self.target is not None and not isinstance(self.target, Target):
            raise InvalidParameterError("target", self.target, "a Target(epsilon, delta, notion) or None")
        if self.blocks is not None:
            if not isinstance(self.pmf, Channel) or not isinstance(self.blocks, BlockMap):
                raise InvalidParameterError("blocks", type(self.blocks).__name__, "a BlockMap, with a channel")
            self.blocks.check(self.pmf.matrix.shape)
        nb = default_neighbourhood(self.pmf, self.neighbourhood)
        if isinstance(self.pmf, CyclicPMF):
            nb.cyclic_shifts(self.pmf.shape)  # type: ignore[union-attr]  # validates distances against the domain
        elif isinstance(self.pmf, IntegerPMF):
            nb.integer_shifts()  # type: ignore[union-attr]
        else:
            nb.ordered(self.pmf.n_inputs)  # type: ignore[union-attr]
        object.__setattr__(self, "neighbourhood", nb)

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
        from .analysis.composition import compose
        return compose(self.certify(max_memory=max_memory), k, epsilon=epsilon, delta=delta, max_memory=max_memory)

    def tradeoff(self, *, exact: bool = False, max_memory: int | None = None):
        """The trade-off curve of the best attacker (:func:`optnoise.analysis.tradeoff.tradeoff`):
        exact vertices and readouts rounded up with ``exact``, float otherwise."""
        from .analysis.tradeoff import tradeoff
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
        from .analysis.tradeoff import DEFAULT_FPRS
        from .analysis.tradeoff_composition import compose_tradeoff
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
        from .sampling import quantize
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
        from .sampling import quantize
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
        from .sampling.words import check_count
        n = check_count(count)
        check(array_bytes(n, 8, copies=8), parameter="count", value=count, what=f"{n} draws", max_memory=max_memory)
        if self.kind == "channel":
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
            return _draws(q_values + noise.reshape(q_values.shape), src)
        shape = quantized.shape
        if len(shape) > 1:
            noise2 = np.stack(np.unravel_index(noise, shape), axis=-1)
            return _draws((q_values + noise2) % np.asarray(shape), src)
        return _draws((q_values + noise.reshape(q_values.shape)) % shape[0], src)

    def _row(self, answers: np.ndarray | int) -> np.ndarray | int:
        """The channel's row of each (checked) answer: itself, or its interval's (``blocks``)."""
        if self.blocks is None:
            return answers
        rows = self.blocks.rows_of(np.asarray(answers, dtype=np.int64))
        return int(rows) if np.ndim(rows) == 0 else rows

    def _released(self, columns: np.ndarray) -> np.ndarray:
        """The released value of each drawn column: itself, or its value (``blocks``)."""
        return columns if self.blocks is None else self.blocks.released(columns)

    @property
    def n_answers(self) -> int | None:
        """A channel's number of answers (its inputs, or ``blocks.answers``); ``None`` for noise."""
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
        if self.kind == "integer":
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
    def to_json(self) -> dict:
        """The mechanism-file object (``format`` ``optnoise.mechanism``, version 1)."""
        out: dict[str, Any] = {"format": SCHEMA, "format_version": SCHEMA_VERSION, "kind": self.kind,
                               "name": self.name}
        p = self.pmf
        if isinstance(p, CyclicPMF):
            out["pmf"] = p.probs.tolist()
            out["shape"] = list(p.shape)
            exact = p.exact
        elif isinstance(p, IntegerPMF):
            out["pmf"] = p.probs.tolist()
            out["offset"] = p.offset
            out["left_tail"] = _tail_json(p.left_tail)
            out["right_tail"] = _tail_json(p.right_tail)
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
        payload = {**(report or {}), **self.to_json()}
        write_text_atomic(path, dumps(payload), replace=force)

    @classmethod
    def from_json(cls, data: dict, *, parameter: str = "mechanism") -> "Mechanism":
        """Build a mechanism from a mechanism-file object (or a pre-schema design file)."""
        return mechanism_from_json(data, parameter=parameter)


def _first(arr: np.ndarray) -> Any:
    """The first value of an array, as a plain Python value for a message."""
    flat = np.asarray(arr).ravel()
    return flat[0].item() if flat.size and hasattr(flat[0], "item") else (flat[0] if flat.size else None)


def _tail_json(tail: GeometricTail | None) -> dict | None:
    return None if tail is None else {"ratio": tail.ratio, "period": tail.period}


#: Largest difference between a mass of a file's ``pmf`` (or ``channel``) and its ``exact``
#: value: written by optnoise, the float is the exact value's nearest double.
EXACT_AGREEMENT = 1e-12


def _exact_array(data: dict, floats: np.ndarray, parameter: str, key: str = "pmf") -> np.ndarray | None:
    """The file's ``exact`` masses, which must be the masses of ``key`` written exactly: a file
    whose two copies disagree was edited by hand, and which one was meant is unknown."""
    values = data.get("exact")
    if values is None:
        return None
    if not isinstance(values, list):
        raise InvalidParameterError(parameter, "exact", "exact masses: a list of 'p/q' strings")
    try:
        flat = [Fraction(str(v)) for v in values]
    except (ValueError, ZeroDivisionError, TypeError) as exc:
        raise InvalidParameterError(parameter, "exact", "exact masses written as 'p/q' strings") from exc
    if len(flat) != floats.size:
        raise InvalidParameterError(parameter, f"{len(flat)} exact masses", f"{floats.size} (one per mass of '{key}')")
    for i, (v, f) in enumerate(zip(flat, floats.ravel())):
        if abs(float(v) - float(f)) > EXACT_AGREEMENT:
            raise InvalidParameterError(parameter, f"'{key}' and 'exact' disagree at index {i} ({float(f):.12g} vs "
                                        f"{v})", "a file whose 'exact' masses are its masses written exactly (edit "
                                        "both, or delete 'exact')")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(floats.shape)


def _tail_from_json(data: Any, parameter: str) -> GeometricTail | None:
    if data is None:
        return None
    if not isinstance(data, dict) or "ratio" not in data:
        raise InvalidParameterError(parameter, data, "a tail object {\"ratio\": R, \"period\": P} or null")
    return GeometricTail(float(data["ratio"]), int(data.get("period", 1)))


def _number_list(data: dict, key: str, parameter: str) -> np.ndarray:
    if key not in data:
        what = "the matrix P[input, output]" if key == "channel" else "the masses"
        raise InvalidParameterError(parameter, f"no '{key}' key", f"a {data.get('kind') or 'cyclic'} mechanism file "
                                    f"with key '{key}' ({what})")
    try:
        arr = np.asarray(data[key], dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, key, f"key '{key}' holding a (nested) list of numbers") from exc
    return arr


def mechanism_from_json(data: dict, *, parameter: str = "mechanism") -> Mechanism:
    """A :class:`Mechanism` from a mechanism-file object.

    Also reads the files optnoise wrote before the schema existed: a ``design`` JSON
    (``pmf`` + ``guarantee``) is cyclic noise with the design's neighbourhood and target;
    an integer-line or Wasserstein design (``pmf`` + ``offset`` + ``tail``) is noise on Z
    with both tails. Whatever is wrong inside the object is reported as a bad ``parameter``
    (the file), naming the key and what it accepts.
    """
    with _file_errors(parameter, "the mechanism object"):
        return _mechanism_from_json(data, parameter)


@contextmanager
def _file_errors(parameter: str, source: str) -> Iterator[None]:
    """Errors about the *contents* of a file become errors about the file: ``parameter``
    (the file's parameter) with the value ``source`` (its path), saying what was wrong."""
    try:
        yield
    except ResourceLimitError:
        raise
    except InvalidParameterError as exc:
        if exc.parameter == parameter and exc.value == source:
            raise
        inner = "" if exc.parameter == parameter else f"its {exc.parameter}: "
        found = exc.value if isinstance(exc.value, str) else show_value(exc.value)
        accepted = exc.accepted.replace(" (normalize=True rescales them)", "")  # a file is not rescaled
        raise InvalidParameterError(parameter, source, f"a valid mechanism file ({inner}{found}; accepted: "
                                    f"{accepted})") from exc
    except KeyError as exc:
        raise InvalidParameterError(parameter, source, f"a valid mechanism file (its key {exc} is missing; "
                                    "docs/cli.md, 'Mechanism files')") from exc
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        raise InvalidParameterError(parameter, source, f"a valid mechanism file (docs/cli.md, 'Mechanism files'): "
                                    f"{one_line(exc)}") from exc


#: The keys each kind of mechanism file is written with (:meth:`Mechanism.to_json`): a file
#: whose ``kind`` names another kind than its keys was edited, and is refused.
KIND_KEYS = {"cyclic": ("pmf", "shape"), "integer": ("pmf", "offset", "left_tail", "right_tail"),
             "channel": ("channel",)}


def _check_kind(data: dict, kind: str, parameter: str) -> None:
    """The file's keys are those of its ``kind`` (report keys beside them are not schema keys)."""
    for other, keys in KIND_KEYS.items():
        foreign = [k for k in keys if k not in KIND_KEYS[kind] and data.get(k) is not None]
        if other != kind and foreign and all(k in data for k in keys):
            raise InvalidParameterError(parameter, f"kind '{kind}' with the keys of a {other} file ({', '.join(keys)})",
                                        "a file whose 'kind' matches its keys (was 'kind' edited?)")
    missing = [k for k in KIND_KEYS[kind] if k not in data]
    if missing:
        raise InvalidParameterError(parameter, f"kind '{kind}' without key '{missing[0]}'",
                                    f"a {kind} mechanism file, with key{'s' if len(KIND_KEYS[kind]) > 1 else ''} "
                                    + ", ".join(f"'{k}'" for k in KIND_KEYS[kind]))


def _mechanism_from_json(data: dict, parameter: str, origin: MechanismFile | None = None) -> Mechanism:
    if not isinstance(data, dict):
        raise InvalidParameterError(parameter, type(data).__name__, "a JSON object (a mechanism file)")
    if data.get("format") not in (None, SCHEMA):
        raise InvalidParameterError(parameter, data.get("format"), f"format '{SCHEMA}'")
    if data.get("format") == SCHEMA and data.get("format_version") != SCHEMA_VERSION:
        raise InvalidParameterError(parameter, data.get("format_version"), f"format_version {SCHEMA_VERSION}")
    legacy = data.get("format") is None
    kind = data.get("kind") or ("integer" if "offset" in data and "tail" in data else "cyclic")
    if kind not in ("cyclic", "integer", "channel"):
        raise InvalidParameterError(parameter, kind, "kind 'cyclic', 'integer' or 'channel'")
    if not legacy:
        _check_kind(data, kind, parameter)
    target = None
    nb_data = data.get("neighbourhood")
    if legacy and "guarantee" in data and not isinstance(data["guarantee"], dict):
        raise InvalidParameterError("guarantee", data["guarantee"], "an object {\"epsilon\", \"delta\", "
                                    "\"notion\", \"neighbourhood\"} (a design file)")
    if legacy and isinstance(data.get("guarantee"), dict):  # a design file from before the schema
        g = data["guarantee"]
        nb_data = g.get("neighbourhood", nb_data)
        target = Target(g["epsilon"], g.get("delta", 0.0) or 0.0, g.get("notion", "dp")) if "epsilon" in g else None
    elif data.get("target") is not None:
        target = Target.from_json(data["target"], parameter=parameter)
    elif legacy and kind == "integer" and "epsilon" in data:
        target = Target(data["epsilon"])
    if kind == "channel":
        matrix = _number_list(data, "channel", parameter)
        pmf: CyclicPMF | IntegerPMF | Channel = Channel(matrix, exact=_exact_array(data, matrix, parameter, "channel"))
        nb = InputPairs.from_json(nb_data) if isinstance(nb_data, dict) and "pairs" in nb_data else (
            Neighbourhood.from_json(nb_data) if nb_data else Neighbourhood((1,)))
    else:
        if "pmf" not in data:
            raise InvalidParameterError(parameter, "no 'pmf' key", "a mechanism file with key 'pmf'")
        probs = _number_list(data, "pmf", parameter)
        exact = _exact_array(data, probs, parameter)
        if kind == "cyclic":
            if not legacy and "shape" in data and list(data["shape"] or []) != list(probs.shape):
                raise InvalidParameterError(parameter, f"shape {data['shape']} for masses of shape {list(probs.shape)}",
                                            "a 'shape' that is the shape of 'pmf'")
            pmf = CyclicPMF(probs, exact=exact)
        else:
            offset = data.get("offset", 0)
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise InvalidParameterError(parameter, f"offset {offset!r}", "an integer offset")
            if legacy:
                tail = data["tail"]
                left = right = GeometricTail(float(tail["ratio"]), int(tail["period"]))
            else:
                left = _tail_from_json(data.get("left_tail"), parameter)
                right = _tail_from_json(data.get("right_tail"), parameter)
            pmf = IntegerPMF(probs, offset, left_tail=left, right_tail=right, exact=exact,
                             normalize=legacy and exact is None)
        nb = Neighbourhood.from_json(nb_data) if nb_data else (
            Neighbourhood.sensitivity(int(data["sensitivity"])) if legacy and "sensitivity" in data
            else Neighbourhood((1,)))
    blocks = BlockMap.from_json(data["blocks"]) if kind == "channel" and data.get("blocks") is not None else None
    return Mechanism(pmf, nb, target, str(data.get("name") or data.get("mechanism") or kind), origin, blocks)


def load_mechanism(path: str | os.PathLike, *, neighbourhood: Neighbourhood | InputPairs | None = None,
                   target: Target | None = None, parameter: str = "path") -> Mechanism:
    """Read a mechanism file (any kind), or a plain PMF file (cyclic noise).

    ``neighbourhood`` and ``target`` replace the file's own when given; a plain PMF file
    has neither (default SD 1, no target).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()   # read once: parsed, and hashed for a manifest
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable mechanism or PMF file ({exc})") from exc
    origin = MechanismFile(str(path), hashlib.sha256(raw).hexdigest())
    try:
        text = None if p.suffix.lower() == ".npy" else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable mechanism or PMF file ({exc})") from exc
    if text is not None and text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(parameter, str(path), f"valid JSON ({exc.msg} at line {exc.lineno})") from exc
        except RecursionError:
            raise InvalidParameterError(parameter, str(path), "JSON nested at most a few levels deep") from None
        with _file_errors(parameter, str(path)):
            mech = _mechanism_from_json(data, parameter, origin if neighbourhood is None and target is None else None)
    else:
        pmf_file = read_pmf_file(p, parameter=parameter)
        with _file_errors(parameter, str(path)):
            mech = Mechanism(CyclicPMF(pmf_file["pmf"], exact=pmf_file["exact"]), Neighbourhood((1,)), None, p.name,
                             origin if neighbourhood is None and target is None else None)
    if neighbourhood is None and target is None:
        return mech
    return Mechanism(mech.pmf, neighbourhood if neighbourhood is not None else mech.neighbourhood,
                     target if target is not None else mech.target, mech.name, origin, mech.blocks)


# ------------------------------------------------------------------ constructors
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
    from .families import ChannelFamily, parse_family
    from .families.baselines import wrap as wrap_onto
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
    from .families.geometric import alpha_for_epsilon, geometric_pmf
    if (epsilon is None) == (alpha is None):
        raise InvalidParameterError("epsilon", (epsilon, alpha), "exactly one of epsilon= or alpha=")
    a = alpha_for_epsilon(epsilon, sensitivity) if epsilon is not None else float(alpha)  # type: ignore[arg-type]
    target = Target(epsilon) if epsilon is not None else None
    return Mechanism(geometric_pmf(a), make_neighbourhood(sensitivity=sensitivity), target, f"geometric(alpha={a:.6g})")
