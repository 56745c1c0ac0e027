"""Turning the options a user typed into library objects (neighbourhoods, mechanisms, targets, requests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional

from ..errors import InvalidParameterError
from ..neighbourhood import Distance, Neighbourhood, parse_distances
from ..target import Target, check_notion
from .options import AttackArgs, NeighbourhoodArgs, SourceArgs, TargetArgs

if TYPE_CHECKING:  # numpy and the mechanism load when a command uses them, not when it is registered
    from ..design import Request
    from ..mechanism import Mechanism


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
    return mech.replace(neighbourhood=hood)


def _largest_distance(pmf: object) -> int | None:
    """``n`` for scalar noise on ``{0..n}`` (checked before a ``--bd`` range is built), else ``None``."""
    from ..pmf import CyclicPMF
    return pmf.size - 1 if isinstance(pmf, CyclicPMF) and len(pmf.shape) == 1 else None


def mechanism_from_source(source: SourceArgs, nb: NeighbourhoodArgs, max_memory: int | None = None) -> Mechanism:
    """The mechanism of ``verify``: exactly one of ``--pmf``, ``--pmf-file``, ``--family``, ``--mechanism``.

    A mechanism file (read by ``--mechanism``, or by ``--pmf-file`` when it has the mechanism
    schema) keeps its own kind and neighbourhood unless neighbourhood flags are given.
    """
    from ..io import parse_pmf_text, read_pmf_file
    from ..mechanism import Mechanism, load_mechanism
    from ..pmf import CyclicPMF, IntegerPMF, rounded_table

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
    """``--family NAME:PARAMS`` with the neighbourhood flags (a channel family keeps its own
    neighbours): :func:`optnoise.mechanism.from_family`."""
    from ..mechanism import from_family
    hood = neighbourhood(nb, max_memory=max_memory) if nb is not None and nb.given else None
    return from_family(spec, hood, target, max_memory=max_memory)


def target(args: TargetArgs) -> Optional[Target]:
    """The target of ``--epsilon/--delta/--notion`` or ``--max-tpr/--at-fpr/--max-mu``, or
    ``None`` when none is given (:meth:`~optnoise.target.Target.of` checks the values and their
    combination, naming ``epsilon``, ``delta``, ``notion``, ``max_tpr``...)."""
    return Target.of(args.epsilon, args.delta, args.notion, max_tpr=args.max_tpr, at_fpr=args.at_fpr,
                     max_mu=args.max_mu)


def request_target(epsilon: Optional[float], delta: Optional[float], notion: Optional[str],
                   attack: Optional[AttackArgs] = None) -> Target:
    """The target of ``design``/``compare``: ``--epsilon`` (with ``--delta``, ``--guarantee``) or
    an attack target (``--max-tpr --at-fpr``, ``--max-mu``); one of them is required."""
    if notion is not None:
        check_notion(notion, parameter="--guarantee")
    a = attack or AttackArgs(None, None, None)
    got = Target.of(epsilon, delta, notion, max_tpr=a.max_tpr, at_fpr=a.at_fpr, max_mu=a.max_mu)
    if got is None:
        raise InvalidParameterError("--epsilon", None, "a target: --epsilon E (with --delta D), or --max-tpr BETA "
                                    "--at-fpr ALPHA, or --max-mu MU")
    return got


def releasable(mechanism: Optional[Path], family: Optional[str], nb: NeighbourhoodArgs, goal: TargetArgs,
               max_memory: int | None = None) -> Mechanism:
    """The mechanism of ``sample`` and ``release``: a mechanism file (any kind) or a family,
    with the target and neighbourhood flags replacing the file's own when given."""
    from ..mechanism import load_mechanism
    if (mechanism is None) == (family is None):
        raise InvalidParameterError("--mechanism/--family", "none" if mechanism is None else "both",
                                    "exactly one of --mechanism PATH or --family NAME:PARAMS")
    t = target(goal)
    if family is not None:
        return family_mechanism(family, nb, t, max_memory=max_memory)
    mech = load_mechanism(mechanism, parameter="--mechanism")  # type: ignore[arg-type]
    mech = _with_neighbourhood(mech, nb, max_memory)
    return mech if t is None else mech.replace(target=t)


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


# ------------------------------------------------------------------ flags -> Request
def _dims(n: Optional[str], what: str = "") -> int | tuple[int, ...] | None:
    """``--n``: one integer, or ``N1,N2`` for a vector query (the request checks the values)."""
    if n is None:
        return None
    accepted = "an integer n >= 1, or n1,n2 for a vector query" if not what else f"one integer n >= 1 {what}"
    try:
        dims = [int(x) for x in str(n).split(",") if x.strip()]
    except ValueError as exc:
        raise InvalidParameterError("--n", n, accepted) from exc
    if not dims or (what and len(dims) != 1):
        raise InvalidParameterError("--n", n, accepted)
    return dims[0] if len(dims) == 1 else tuple(dims)


def _cost_of_file(cost: Optional[str], cost_file: Optional[Path], max_memory: int | None) -> Any:
    """``--cost-file``: a user cost, one finite value per noise value (instead of ``--cost``)."""
    import numpy as np

    from ..io import read_pmf_file
    if cost is not None:
        raise InvalidParameterError("--cost", cost, "either --cost or --cost-file, not both")
    values = read_pmf_file(cost_file, parameter="--cost-file", max_memory=max_memory)["pmf"]  # type: ignore[arg-type]
    if np.any(~np.isfinite(values)):
        raise InvalidParameterError("--cost-file", str(cost_file), "finite costs")
    return values


def design_request(nb: NeighbourhoodArgs, *, epsilon: Optional[float], delta: Optional[float], notion: Optional[str],
                   n: Optional[str],
                   cost: Optional[str], cost_file: Optional[Path], minimize: str, max_cost: Optional[float],
                   formulation: str, time_limit: Optional[float], releases: Optional[int], space: str, form: str,
                   constraints: Optional[str], prior: Optional[str], worst_case: bool, per_record: bool,
                   max_memory: Optional[int], attack: Optional[AttackArgs] = None,
                   max_seconds: Optional[float] = None) -> Request:
    """The :class:`~optnoise.design.request.Request` of ``optnoise design``'s flags: which flag
    sets which field (the request's own rules say which fields go together)."""
    from ..costs import RELEASED_COSTS, ReleasedCost
    from ..design import Request
    from ..design.block_design import block_request as compact_channel
    from ..mechanism import LISTED_UP_TO
    if form not in ("noise", "channel"):
        raise InvalidParameterError("--form", form, "noise (noise added mod n+1) or channel (any P[q, y] on {0..n})")
    if space != "cyclic" and releases is None:
        raise InvalidParameterError("--space", space, "cyclic (integer only with --releases)")
    if space not in ("cyclic", "integer"):
        raise InvalidParameterError("--space", space, "cyclic or integer")
    if cost_file is not None and (form == "channel" or space == "integer"):
        raise InvalidParameterError("--cost-file", str(cost_file), "a cost per noise value, for noise mod n+1")
    if per_record and nb.given:
        raise InvalidParameterError("--per-record", "with distance flags", "either --per-record or "
                                    "--distances/--sd/--bd/--directed")
    target = request_target(epsilon, delta, notion, attack)
    if target.notion == "attack" and releases is not None:
        flag = "--max-tpr" if target.max_tpr is not None else "--max-mu"
        raise InvalidParameterError(flag, target.max_tpr if target.max_tpr is not None else target.max_mu,
                                    "an --epsilon/--delta target with --releases (an attack target is designed for one "
                                    "release; the attacker after K releases: optnoise verify --attack --compose K)")
    dims = _dims(n, "with --form channel, --prior, --worst-case or --per-record"
                 if form == "channel" or prior is not None or worst_case or per_record else "")
    size = dims if isinstance(dims, int) else None
    if size is not None and size < 1:   # before the distances, which are checked against it
        raise InvalidParameterError("--n", size, "an integer n >= 1 (domain {0..n})")
    value: Any = cost if cost_file is None else _cost_of_file(cost, cost_file, max_memory)
    if form == "noise" and value is None:
        value = "er"
    if form == "noise" and per_record and prior is None and not worst_case and isinstance(value, str) \
            and value in RELEASED_COSTS:
        value = ReleasedCost(value)   # per record, a released-value cost over a uniform answer
    largest = size if form == "noise" and space == "cyclic" and releases is None else None
    hood = neighbourhood(nb, largest=largest, max_memory=max_memory) if nb.given else None
    request = Request(space="channel" if form == "channel" else space, n=dims, target=target, neighbourhood=hood,
                      unit="record" if per_record else None, cost=value,
                      prior=prior_weights(prior, size) if prior is not None and size is not None else prior,
                      worst_case=worst_case, releases=1 if releases is None else releases,
                      constraints=tuple(c.strip() for c in (constraints or "").split(",") if c.strip()),
                      minimize=minimize, max_cost=max_cost, formulation=formulation, time_limit=time_limit,
                      max_memory=max_memory, max_seconds=max_seconds)
    if form == "channel" and not compact_channel(request) and (size + 1) ** 2 <= LISTED_UP_TO:  # type: ignore[operator]
        _check_channel_report(size, max_memory)  # type: ignore[arg-type]   # larger ones: summarised, not listed
    return request


def _check_channel_report(size: int, max_memory: Optional[int]) -> None:
    """Refuse before solving a channel whose report could not be written: it lists every entry
    twice (the design's keys and the mechanism schema's), as Python floats in lists and as JSON text.
    Beyond ``LARGE_FROM`` no channel is listed (the clamped noise answers, or the library refuses
    the dense design with its own estimate)."""
    from ..design.large_channel import LARGE_FROM
    from ..resources import channel_bytes, check
    if size is not None and size > LARGE_FROM:   # no matrix is reported: the clamped noise, or the library refuses
        return
    check(channel_bytes(size + 1, size + 1, copies=16), parameter="--n", value=size, max_memory=max_memory,
          what=f"the report of a channel on {{0..{size}}} (its {(size + 1) ** 2:.3g} entries listed in JSON; the "
               "library's optnoise.design returns it as an array)")


def compare_request(nb: NeighbourhoodArgs, *, n: Optional[int], epsilon: Optional[float], delta: Optional[float],
                    notion: Optional[str], cost: Optional[str], space: str, form: str, prior: Optional[str],
                    worst_case: bool, per_record: bool, releases: bool, max_memory: Optional[int],
                    attack: Optional[AttackArgs] = None) -> Request:
    """The :class:`~optnoise.design.request.Request` of ``optnoise compare``'s flags, at the
    first epsilon (the comparison replaces it for each)."""
    from ..costs import ReleasedCost
    from ..design import Request
    if form not in ("noise", "channel"):
        raise InvalidParameterError("--form", form, "noise (noise added mod n+1) or channel (an ordered domain)")
    target = request_target(epsilon, delta, notion, attack)
    if form == "channel":
        if space != "cyclic":
            raise InvalidParameterError("--space", "given", "not with --form channel (outputs stay in {0..n}; the line "
                                                             "noises are clamped)")
        if n is None or n < 1:
            raise InvalidParameterError("--n", n, "an integer n >= 1 (domain {0..n})")
        if per_record and nb.given:
            raise InvalidParameterError("--per-record", "with distance flags", "either --per-record or "
                                        "--distances/--sd/--bd/--directed")
        objective = ReleasedCost(cost or "abs-error", prior_weights(prior, n), worst_case)
        return Request(space="channel", n=n, target=target, neighbourhood=None if per_record else neighbourhood(nb),
                       unit="record" if per_record else None, cost=objective, max_memory=max_memory)
    if prior is not None or worst_case or per_record:
        raise InvalidParameterError("--prior/--worst-case/--per-record", "given", "only with --form channel")
    if space != "cyclic" and not releases:
        raise InvalidParameterError("--space", space, "cyclic (integer only with --releases)")
    hood = neighbourhood(nb) if releases else neighbourhood(nb, largest=n if n is not None and n >= 1 else None,
                                                            max_memory=max_memory)
    return Request(space=space, n=n, target=target, neighbourhood=hood, cost=cost or "er", max_memory=max_memory)


def rr_request(categories: int, *, epsilon: float, delta: float, max_memory: Optional[int]) -> Request:
    """The :class:`~optnoise.design.request.Request` of ``optnoise rr``: ``K`` categories."""
    from ..design import Request
    from ..design.rr import check_memory
    if isinstance(categories, bool) or categories < 2:
        raise InvalidParameterError("--categories", categories, "an integer number of categories >= 2")
    check_memory(categories, max_memory)   # before the request lists every distance
    return Request(space="categories", n=categories - 1, target=Target(epsilon, delta), max_memory=max_memory)
