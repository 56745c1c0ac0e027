"""Option declarations shared by the commands, declared once.

Single options are ``typing.Annotated`` types (``Json``, ``Plot``...). Options that always
travel together -- the neighbourhood (``--distances/--sd/--bd/--directed``), the
mechanism source of ``verify`` and ``sample``, a target for a plain PMF file -- are
*groups*: :func:`with_groups` adds a group's options to a command's signature (so typer
sees them) and hands the command one object built from them.
"""

import functools
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

Json = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Plot = Annotated[Optional[Path], typer.Option("--plot", help="Write a figure as a PNG.")]
Output = Annotated[Optional[Path], typer.Option("--output", help="Write the mechanism file (JSON, atomically).")]
Seed = Annotated[Optional[int], typer.Option("--seed", help="Seeded generator: reproducible and NOT private.")]
Audit = Annotated[Optional[Path], typer.Option(
    "--audit", help="Write the private audit record here (diagnostics of the input without noise: never publish "
                    "it).")]
LedgerPath = Annotated[Optional[Path], typer.Option(
    "--ledger", help="The dataset's privacy ledger (optnoise ledger init): the run is recorded before any noise is "
                     "drawn, refused above the lifetime budget.")]
TimeLimit = Annotated[Optional[float], typer.Option(
    "--time-limit", help="Solver time limit in seconds; reaching it is an error (exit 1).")]
Notion = Annotated[str, typer.Option(
    "--notion", "--guarantee", help="The notion of the target: dp, approximate DP (hockey-stick); pdp, probabilistic "
                                    "DP (Kadam Def. 2). --guarantee is the same flag.")]

OptionalNotion = Annotated[Optional[str], typer.Option(
    "--notion", "--guarantee", help="The notion of the target: dp (default), approximate DP (hockey-stick); pdp, "
                                    "probabilistic DP (Kadam Def. 2). --guarantee is the same flag.")]
#: ``--delta`` of ``design`` and ``compare`` (optional: 0 by default).
OptionalDelta = Annotated[Optional[float], typer.Option("--delta", help="Target delta (0 <= delta < 1; default 0).")]


def _opt(name: str, flag: str | tuple[str, ...], kind: Any, help: str, default: Any = None) -> inspect.Parameter:
    """One option of a group: keyword ``name``, flag ``flag`` (or several names of one flag), type ``kind``."""
    flags = (flag,) if isinstance(flag, str) else flag
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, typer.Option(*flags, help=help)])


@dataclass(frozen=True)
class Group:
    """Options that travel together: ``build(**values)`` makes the object the command receives
    under the keyword ``name``. A group that ``sees`` the command also gets, as ``command``,
    every other value the user gave (as typed by typer, before any group is built)."""

    name: str
    params: tuple[inspect.Parameter, ...]
    build: Callable[..., Any]
    sees: bool = False


def with_groups(*groups: Group) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add each group's options to the command's signature; pass the built objects instead."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()
               if p.name not in {g.name for g in groups}]
        extra = [p for g in groups for p in g.params]

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            typed = dict(kwargs)  # a group that sees the command sees every other value as typed
            for g in groups:
                values = {p.name: kwargs.pop(p.name) for p in g.params}
                if g.sees:
                    command = {k: v for k, v in typed.items() if k not in values}
                    kwargs[g.name] = g.build(**values, command=command)
                else:
                    kwargs[g.name] = g.build(**values)
            return fn(**kwargs)

        params = own + extra
        wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        hints = {k: v for k, v in getattr(fn, "__annotations__", {}).items() if k in {p.name for p in own} or k == "return"}
        wrapper.__annotations__ = {**hints, **{p.name: p.annotation for p in extra}}
        return wrapper

    return deco


# ------------------------------------------------------------------ neighbourhood
@dataclass(frozen=True)
class NeighbourhoodArgs:
    """The raw ``--distances/--sd/--bd/--directed`` values."""

    distances: Optional[str]
    sd: Optional[int]
    bd: Optional[int]
    directed: bool

    @property
    def given(self) -> bool:
        """Whether the user gave any neighbourhood flag."""
        return self.distances is not None or self.sd is not None or self.bd is not None or self.directed


NEIGHBOURHOOD = Group("nb", (
    _opt("distances", "--distances", Optional[str],
         "Query distances mu = Q(X) - Q(X'), e.g. 1,2,3 or 1..3; vectors '1,0;0,1'."),
    _opt("sd", "--sd", Optional[int], "Single distance: same as --distances MU."),
    _opt("bd", "--bd", Optional[int], "Bounded difference: same as --distances 1..MUBAR."),
    _opt("directed", "--directed", bool,
         "Use exactly the listed distances (Kadam et al.'s tables); default is symmetric.", False),
), NeighbourhoodArgs)


# ------------------------------------------------------------------ mechanism source
@dataclass(frozen=True)
class SourceArgs:
    """Where ``verify`` takes its mechanism from."""

    pmf: Optional[str]
    pmf_file: Optional[Path]
    family: Optional[str]
    mechanism: Optional[Path]
    space: Optional[str]
    offset: Optional[int]
    normalize: bool


SOURCE = Group("source", (
    _opt("pmf", "--pmf", Optional[str], "Noise masses, e.g. 0.5,0.25,0.25 (decimals are kept exactly)."),
    _opt("pmf_file", "--pmf-file", Optional[Path],
         "PMF file: JSON list, JSON with key 'pmf' (e.g. a design), CSV/text one value per line, or .npy; "
         "a mechanism file is read whole."),
    _opt("family", "--family", Optional[str], "A built-in family NAME:PARAMS (see 'optnoise families')."),
    _opt("mechanism", "--mechanism", Optional[Path],
         "A mechanism file (written by design, staircase, wasserstein, rr, families, verify with --output)."),
    _opt("space", "--space", Optional[str], "cyclic (default): noise added mod len(pmf); integer: noise on Z "
                                            "(use --offset)."),
    _opt("offset", "--offset", Optional[int], "With --space integer: pmf[i] is the mass at i - OFFSET."),
    _opt("normalize", "--normalize", bool, "Rescale masses that do not sum to 1 (a rounded table).", False),
), SourceArgs)


# ------------------------------------------------------------------ attack targets (issue 24)
#: ``--max-tpr BETA --at-fpr ALPHA`` and/or ``--max-mu MU``: a target in attack terms (docs/attacks.md),
#: instead of ``--epsilon``; the library's :meth:`~optnoise.target.Target.of` validates the combination.
ATTACK_OPTIONS: tuple[inspect.Parameter, ...] = tuple(
    _opt(name, "--" + name.replace("_", "-"), Optional[float], words) for name, words in (
        ("max_tpr", "Attack target: the best attacker's true-positive rate is at most BETA at the false-positive "
                    "rate --at-fpr (instead of --epsilon; docs/attacks.md)."),
        ("at_fpr", "Attack target: the false-positive rate ALPHA of --max-tpr."),
        ("max_mu", "Attack target: at most as revealing as Gaussian DP with this mu (instead of --epsilon)."),
    ))

#: ``--attack``: also what the best attacker can learn (``verify``, ``compare``).
AttackFlag = Annotated[bool, typer.Option(
    "--attack", help="Also say what the best attacker who knows everything else can learn (docs/attacks.md): its "
                     "true-positive rate at --fpr and its Gaussian-DP mu (verify: also the advantage and the largest "
                     "posterior); with --plot, draw the attacker's curve (compare: every mechanism's).")]


@dataclass(frozen=True)
class AttackArgs:
    """The raw ``--max-tpr/--at-fpr/--max-mu`` values."""

    max_tpr: Optional[float]
    at_fpr: Optional[float]
    max_mu: Optional[float]

    @property
    def given(self) -> bool:
        return self.max_tpr is not None or self.at_fpr is not None or self.max_mu is not None


ATTACK = Group("attack_target", ATTACK_OPTIONS, AttackArgs)


# ------------------------------------------------------------------ target of a plain PMF file
@dataclass(frozen=True)
class TargetArgs:
    """``--epsilon/--delta/--notion`` (alias ``--guarantee``), or ``--max-tpr/--at-fpr/--max-mu``,
    as the target of a mechanism that carries none (or replacing its own)."""

    epsilon: Optional[float]
    delta: Optional[float]
    notion: Optional[str]
    max_tpr: Optional[float] = None
    at_fpr: Optional[float] = None
    max_mu: Optional[float] = None

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.epsilon, self.delta, self.notion, self.max_tpr, self.at_fpr,
                                           self.max_mu))


TARGET = Group("target", (
    _opt("epsilon", "--epsilon", Optional[float],
         "Target epsilon for a mechanism without one (a design file carries its own)."),
    _opt("delta", "--delta", Optional[float], "Target delta (with --epsilon)."),
    _opt("notion", ("--notion", "--guarantee"), Optional[str], "dp or pdp: the notion of the target (--guarantee is "
                                                               "the same flag)."),
    *ATTACK_OPTIONS,
), TargetArgs)


# ------------------------------------------------------------------ memory and time limits
def _limit(name: str, parse: str, help: str) -> Group:
    """The group of one limit flag (``--max-memory``, ``--max-seconds``): the command receives
    ``name``, parsed by :mod:`optnoise.resources`'s ``parse`` (``None`` for the default)."""
    flag = "--" + name.replace("_", "-")

    def build(**values: Optional[str]) -> Any:
        from .. import resources
        value = values[name]
        return None if value is None else getattr(resources, parse)(value, parameter=flag)

    return Group(name, (_opt(name, flag, Optional[str], help),), build)


#: ``--max-memory SIZE``: the command receives ``max_memory`` (bytes, or ``None`` for the default).
LIMITS = _limit("max_memory", "parse_memory", "Memory a computation may plan to use, e.g. 8G (default: half of this "
                "machine's memory); larger problems are refused before anything is allocated.")
#: ``--max-seconds S`` (issue 26): the command receives ``max_seconds`` (seconds, or ``None`` for the default).
SECONDS = _limit("max_seconds", "parse_seconds", "Time a computation may be estimated to take, e.g. 90, 10m, 2h "
                 "(default: 5 minutes); longer ones are refused before they start, naming the estimate.")


# ------------------------------------------------------------------ ordered domains (issue 15)
Form = Annotated[str, typer.Option(
    "--form", help="noise: noise added mod N+1 (Kadam et al.); channel: any row-stochastic P[q, y] on {0..N} "
                   "(outputs stay in the domain; ordered domains such as ages).")]
Prior = Annotated[Optional[str], typer.Option(
    "--prior", help="Prior on the true answer for released-value costs: uniform (default) or a file of N+1 "
                    "weights (same forms as --pmf-file).")]
WorstCase = Annotated[bool, typer.Option(
    "--worst-case", help="Released-value cost in the worst case over the true answer, not averaged over the prior.")]
PerRecord = Annotated[bool, typer.Option(
    "--per-record", help="Any two answers are neighbours (each record released on its own: the standard unit); "
                         "instead of the distance flags.")]


# ------------------------------------------------------------------ the output rule (issue 26)
@dataclass(frozen=True)
class Writes:
    """``--force``, and the files the command reads (never replaced): what a command passes
    to the library functions that write (:func:`optnoise.io.check_output`)."""

    force: bool
    reads: tuple[Path, ...]


#: Parameters that name a path a command writes -> their flag (``--out``: a directory written into).
WRITTEN = {"output": "--output", "plot": "--plot", "out_dir": "--out"}


def _files_named(values: dict[str, Any]) -> tuple[Path, ...]:
    """The existing files named by a command's values (``--mechanism F``, ``--prior F``,
    ``--input pmf-file:F``...): what it reads, whatever the option."""
    found = []
    for name, value in values.items():
        if name in WRITTEN or value is None or isinstance(value, bool):
            continue
        text = str(value)
        text = text.split(":", 1)[1] if text.startswith("pmf-file:") else text
        try:
            if text.strip() and Path(text).is_file():
                found.append(Path(text))
        except (OSError, ValueError):  # not a path at all (too long, a NUL byte)
            continue
    return tuple(found)


def _writes(force: bool, command: dict[str, Any]) -> Writes:
    """Check every path the command writes before it computes anything: not a file it reads,
    not an existing file unless ``--force`` (:func:`optnoise.io.check_output`)."""
    from ..errors import InvalidParameterError
    from ..io import check_output
    reads = _files_named(command)
    written: dict[str, str] = {}
    for name, flag in WRITTEN.items():
        value = command.get(name)
        if value is None:
            continue
        kind = "directory" if name == "out_dir" else "dataset" if command.get("engine") == "spark" else "file"
        path = check_output(value, force=force, reads=reads, parameter=flag, kind=kind)
        key = os.path.realpath(path)
        if key in written:
            raise InvalidParameterError(flag, str(value), f"a path other than {written[key]}'s")
        written[key] = flag
    return Writes(bool(force), reads)


#: ``--force``: any command that writes files takes it; the command receives ``writes`` (:class:`Writes`),
#: after every path it writes (``--output``, ``--plot``, ``--out``) has been checked.
WRITES = Group("writes", (
    _opt("force", "--force", bool, "Replace existing output files (never a file the command reads).", False),
), _writes, sees=True)
