"""Turning the options a user typed into library objects (neighbourhoods, mechanisms, targets)."""

import json
from pathlib import Path
from typing import Iterable, Optional

from ..errors import InvalidParameterError
from ..mechanism import Mechanism, load_mechanism
from ..neighbourhood import Distance, Neighbourhood, parse_distances
from ..pmf import CyclicPMF, rounded_table
from ..target import Target, check_notion
from .options import NeighbourhoodArgs, SourceArgs, TargetArgs


def neighbourhood(args: NeighbourhoodArgs, default: Iterable[Distance] = (1,), *, largest: int | None = None,
                  max_memory: int | None = None) -> Neighbourhood:
    """The neighbourhood of ``--distances/--sd/--bd/--directed`` (SD 1 when none is given).

    ``largest``: the largest distance the domain has (``n`` on ``{0..n}``), checked before
    a ``--bd`` range is built.
    """
    given = [x is not None for x in (args.distances, args.sd, args.bd)]
    if sum(given) > 1:
        raise InvalidParameterError("--distances/--sd/--bd", "more than one", "exactly one of them (or none for SD 1)")
    for flag, value in (("--sd", args.sd), ("--bd", args.bd)):
        if value is not None and value < 1:
            raise InvalidParameterError(flag, value, "an integer >= 1")
        if value is not None and largest is not None and value > largest:
            raise InvalidParameterError(flag, value, f"an integer from 1 to {largest} (the largest distance on a "
                                                     f"domain of {largest + 1} values)")
    if args.sd is not None:
        return Neighbourhood.sd(args.sd, directed=args.directed)
    if args.bd is not None:
        return Neighbourhood.bd(args.bd, directed=args.directed, max_memory=max_memory)
    if args.distances is not None:
        return Neighbourhood(parse_distances(args.distances, max_memory=max_memory), args.directed)
    return Neighbourhood(tuple(default), args.directed)


def _is_mechanism_file(path: Path) -> dict | None:
    """The JSON object of a mechanism file (one with a ``format`` key), else ``None``."""
    if path.suffix.lower() == ".npy" or not path.is_file():
        return None
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) and "format" in data else None


def _with_neighbourhood(mech: Mechanism, args: NeighbourhoodArgs, max_memory: int | None = None) -> Mechanism:
    if not args.given:
        return mech
    hood = neighbourhood(args, largest=_largest_distance(mech.pmf), max_memory=max_memory)
    return Mechanism(mech.pmf, hood, mech.target, mech.name)


def _largest_distance(pmf: object) -> int | None:
    """``n`` for scalar noise on ``{0..n}`` (checked before a ``--bd`` range is built), else ``None``."""
    return pmf.size - 1 if isinstance(pmf, CyclicPMF) and len(pmf.shape) == 1 else None


def mechanism_from_source(source: SourceArgs, nb: NeighbourhoodArgs, max_memory: int | None = None) -> Mechanism:
    """The mechanism of ``verify``: exactly one of ``--pmf``, ``--pmf-file``, ``--family``, ``--mechanism``.

    A mechanism file (read by ``--mechanism``, or by ``--pmf-file`` when it has the mechanism
    schema) keeps its own kind and neighbourhood unless neighbourhood flags are given.
    """
    from ..io import parse_pmf_text, read_pmf_file
    from ..pmf import IntegerPMF

    chosen = [x is not None for x in (source.pmf, source.pmf_file, source.family, source.mechanism)]
    if sum(chosen) != 1:
        raise InvalidParameterError("--pmf/--pmf-file/--family/--mechanism", "none" if not any(chosen) else "several",
                                    "exactly one mechanism source")
    space = source.space if source.space is not None else "cyclic"
    if space not in ("cyclic", "integer"):
        raise InvalidParameterError("--space", space, "'cyclic' or 'integer'")
    if source.family is not None:
        return family_mechanism(source.family, nb, max_memory=max_memory)
    file_path = source.mechanism if source.mechanism is not None else source.pmf_file
    # a --pmf-file may be a mechanism file; --mechanism is one (read once, by load_mechanism)
    if source.mechanism is not None or (source.pmf_file is not None and _is_mechanism_file(source.pmf_file)):
        if source.space is not None or source.offset is not None:
            raise InvalidParameterError("--space/--offset", "given", "no --space/--offset with a mechanism file "
                                        "(it says what it is)")
        flag = "--mechanism" if source.mechanism is not None else "--pmf-file"
        mech = load_mechanism(file_path, parameter=flag)  # type: ignore[arg-type]
        return _with_neighbourhood(mech, nb, max_memory)
    if source.pmf is not None:
        floats, exact = parse_pmf_text(source.pmf, "--pmf")
        file_offset = None
    else:
        raw = read_pmf_file(source.pmf_file, parameter="--pmf-file", max_memory=max_memory)  # type: ignore[arg-type]
        floats, exact, file_offset = raw["pmf"], raw["exact"], raw["offset"]
    # a .npy holds floats, which are exact values: the same rule as exact masses (rescaled within the tolerance)
    normalize = source.normalize or (exact is None and source.pmf is None and rounded_table(floats))
    if space != "integer" and source.offset is not None:
        raise InvalidParameterError("--offset", source.offset, "only with --space integer")
    try:
        if space == "integer":
            off = source.offset if source.offset is not None else (file_offset if file_offset is not None else 0)
            pmf: CyclicPMF | IntegerPMF = IntegerPMF(floats, off, normalize=normalize, exact=exact)
        else:
            pmf = CyclicPMF(floats, normalize=normalize, exact=exact)
    except InvalidParameterError as exc:  # the masses came from the file: name it
        if source.pmf is not None or exc.parameter != "pmf":
            raise
        raise InvalidParameterError("--pmf-file", str(source.pmf_file),
                                    f"{exc.accepted} (found {exc.value})") from exc
    if isinstance(pmf, CyclicPMF) and len(pmf.shape) > 1 and nb.distances is None:
        raise InvalidParameterError("--distances", None, "vector distances like '1,0;0,1' for a joint PMF")
    return Mechanism(pmf, neighbourhood(nb, largest=_largest_distance(pmf), max_memory=max_memory), None, "pmf")


def family_mechanism(spec: str, nb: NeighbourhoodArgs | None = None, target: Target | None = None, *,
                     max_memory: int | None = None) -> Mechanism:
    """A family ``NAME:PARAMS`` as a mechanism (channel families keep their own neighbours)."""
    from ..families import ChannelFamily, parse_family
    fam, obj = parse_family(spec, max_memory=max_memory)
    if isinstance(obj, ChannelFamily):
        if nb is not None and nb.given:
            raise InvalidParameterError("--distances/--sd/--bd/--directed", "given",
                                        "no neighbourhood flags with a channel family (its neighbours differ in one row)")
        return Mechanism(obj.channel, obj.pairs, target, spec)
    hood = neighbourhood(nb, largest=_largest_distance(obj), max_memory=max_memory) if nb is not None else \
        Neighbourhood((1,))
    return Mechanism(obj, hood, target, spec)


def target(args: TargetArgs) -> Optional[Target]:
    """The target of ``--epsilon/--delta/--guarantee``, or ``None`` when none is given."""
    if args.epsilon is None:
        if args.delta is not None or args.guarantee is not None:
            raise InvalidParameterError("--epsilon", None, "an epsilon > 0 with --delta/--guarantee")
        return None
    notion = check_notion(args.guarantee or "dp", parameter="--guarantee")
    return Target(_checked(args.epsilon, "--epsilon"), _checked_delta(args.delta), notion)


def _checked(epsilon: float, flag: str) -> float:
    from ..target import check_epsilon
    return check_epsilon(epsilon, allow_zero=False, parameter=flag)


def _checked_delta(delta: Optional[float]) -> float:
    from ..target import check_delta
    return 0.0 if delta is None else check_delta(delta, parameter="--delta")


def releasable(mechanism: Optional[Path], family: Optional[str], nb: NeighbourhoodArgs, goal: TargetArgs,
               max_memory: int | None = None) -> Mechanism:
    """The mechanism of ``sample`` and ``release``: a mechanism file (any kind) or a family,
    with the target and neighbourhood flags replacing the file's own when given."""
    if (mechanism is None) == (family is None):
        raise InvalidParameterError("--mechanism/--family", "none" if mechanism is None else "both",
                                    "exactly one of --mechanism PATH or --family NAME:PARAMS")
    t = target(goal)
    if family is not None:
        return family_mechanism(family, nb, t, max_memory=max_memory)
    mech = load_mechanism(mechanism, parameter="--mechanism")  # type: ignore[arg-type]
    mech = _with_neighbourhood(mech, nb, max_memory)
    return mech if t is None else Mechanism(mech.pmf, mech.neighbourhood, t, mech.name)


def prior_weights(text: Optional[str], n: int) -> Optional[list[float]]:
    """``--prior``: ``uniform`` (``None``) or a file of ``n + 1`` weights (checked by the library)."""
    if text is None or text.strip() == "uniform":
        return None
    from ..io import read_pmf_file
    path = Path(text)
    if not path.is_file():
        raise InvalidParameterError("--prior", text, "uniform, or a file of n+1 weights (JSON list, CSV/text, .npy)")
    weights = read_pmf_file(path, parameter="--prior")["pmf"]
    if len(weights) != n + 1:
        raise InvalidParameterError("--prior", f"{text} ({len(weights)} weights)", f"{n + 1} weights, one per answer "
                                    f"0..{n}")
    return [float(w) for w in weights]


def channel_pairs(args: NeighbourhoodArgs, n: int, per_record: bool):
    """The input pairs of a channel on ``{0..n}``: ``"all"`` with ``--per-record`` (every pair;
    the library lists them once it has checked the size), otherwise the answers whose values
    differ by a distance of the neighbourhood flags (no wrap-around)."""
    from ..neighbourhood import InputPairs
    if per_record:
        if args.given:
            raise InvalidParameterError("--per-record", "with distance flags", "either --per-record or "
                                        "--distances/--sd/--bd/--directed")
        return "all"
    return InputPairs.from_distances(neighbourhood(args), n + 1)
