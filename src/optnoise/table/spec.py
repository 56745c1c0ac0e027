"""What to release from a table: the columns, their domains and mechanisms, the unit, the budget.

One structure, three front doors: a TOML file (``optnoise release --spec FILE.toml``,
:func:`load_spec`), the same structure as a Python dict (:func:`optnoise.release`,
:func:`parse_table_spec`), and the single-column flags of ``optnoise release``
(:func:`column_spec`). Keys (docs/release.md)::

    unit = "record"                           # or "value" (the papers' distance model)
    keep = ["id"]                             # copied unchanged, NOT protected
    budget = { epsilon = 3.0, delta = 1e-6 }  # refuse a record total above it
    [columns.hour]
    domain = { lower = 0, upper = 23, cyclic = true }
    mechanism = "hour.json"                   # a mechanism file (relative to the spec file)
    [columns.state]
    domain = { categories = ["CA", "NY", "TX", "WA"] }
    epsilon = 1.0                             # a target only: optnoise builds the mechanism
    [columns.age]
    domain = { lower = 0, upper = 100 }
    family = "geometric"                      # a family, calibrated to the target (or "geometric:0.99")
    epsilon = 0.5
    clamp = true

Column keys: ``domain`` (``categories``, or ``lower`` + ``upper`` [+ ``cyclic``]; omitted:
all integers, for noise on the integer line under the value unit), one of ``mechanism``
/ ``family`` (+ ``params``) / only a target, the target ``epsilon``, ``delta``,
``notion`` (``dp`` or ``pdp``) -- or a target in attack terms, ``max_tpr`` with ``at_fpr``
and/or ``max_mu`` (docs/attacks.md; also in the budget) --, ``cost`` (a designed column on a
cyclic domain), ``clamp``,
and, under the value unit, the neighbourhood ``sd``, ``bd``, ``distances``, ``directed``.

Errors name the key path (``columns.age.clamp``) under the parameter ``spec``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..mechanism import Mechanism, load_mechanism
from ..neighbourhood import Neighbourhood
from ..publish.spec import ATTACK_KEYS, number, parse_budget, positive_integer, read_toml, section
from ..publish.unit import RELEASE_UNITS
from ..target import Target, check_notion
from .domain import Domain

#: The privacy units of a release (:data:`optnoise.publish.unit.RELEASE_UNITS`).
UNITS: tuple[str, ...] = tuple(RELEASE_UNITS)
TOP_KEYS = ("unit", "keep", "budget", "columns")
COLUMN_KEYS = ("domain", "mechanism", "family", "params", "epsilon", "delta", "notion", "max_tpr", "at_fpr",
               "max_mu", "cost", "clamp", "sd", "bd", "distances", "directed")
DOMAIN_KEYS = ("lower", "upper", "cyclic", "categories")


@dataclass(frozen=True, eq=False)
class ColumnSpec:
    """One column to privatize.

    Exactly one source of the mechanism: ``mechanism`` (a :class:`Mechanism`, e.g. loaded
    from ``mechanism_file``), ``family`` (``NAME`` calibrated to ``target``, or
    ``NAME:PARAMS``), or neither (then ``target`` is required and optnoise builds the
    mechanism). ``target`` replaces a mechanism's own target; ``neighbourhood`` replaces
    its neighbourhood (value unit only). ``clamp`` clamps integer-line noise to the domain.
    """

    name: str
    domain: Domain
    mechanism: Mechanism | None = None
    mechanism_file: str | None = None
    family: str | None = None
    target: Target | None = None
    cost: str | None = None
    clamp: bool = False
    neighbourhood: Neighbourhood | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidParameterError("column", self.name, "a column name")
        if not isinstance(self.domain, Domain):
            raise InvalidParameterError("domain", self.domain, "a Domain")
        if self.mechanism is not None and self.family is not None:
            raise InvalidParameterError("family", self.family, "either a mechanism or a family, not both")
        if self.mechanism is not None and not isinstance(self.mechanism, Mechanism):
            raise InvalidParameterError("mechanism", type(self.mechanism).__name__, "a Mechanism or a mechanism file")
        if self.family is not None and (not isinstance(self.family, str) or not self.family.strip()):
            raise InvalidParameterError("family", self.family, "a family NAME or NAME:PARAMS (optnoise families)")
        if self.mechanism is None and self.family is None and self.target is None:
            raise InvalidParameterError("epsilon", None, "a mechanism, a family, or a target epsilon "
                                                         "(optnoise then builds the mechanism)")
        if not isinstance(self.clamp, bool):
            raise InvalidParameterError("clamp", self.clamp, "true or false")
        if self.cost is not None and (self.mechanism is not None or self.family is not None):
            raise InvalidParameterError("cost", self.cost, "a cost only for a column optnoise designs (target only)")


@dataclass(frozen=True, eq=False)
class TableSpec:
    """The columns to privatize, the columns to copy, the privacy unit and an optional budget."""

    columns: tuple[ColumnSpec, ...]
    keep: tuple[str, ...] = ()
    budget: Target | None = None
    unit: str = "record"

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        if not cols:
            raise InvalidParameterError("columns", [], "at least one column to privatize")
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InvalidParameterError("columns", dup, "each column once")
        keep = tuple(self.keep)
        if not all(isinstance(k, str) and k for k in keep) or len(set(keep)) != len(keep):
            raise InvalidParameterError("keep", list(keep), "distinct column names")
        both = sorted(set(keep) & set(names))
        if both:
            raise InvalidParameterError("keep", both, "columns not also privatized (kept columns are copied unchanged)")
        if self.unit not in UNITS:
            raise InvalidParameterError("unit", self.unit, "'record' (default: any value of a record may change) or "
                                                           "'value' (changes by the mechanism's own distances)")
        if self.budget is not None and not isinstance(self.budget, Target):
            raise InvalidParameterError("budget", self.budget, "a Target(epsilon, delta) or Target.attack(...)")
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "keep", keep)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def replace(self, *, keep: tuple[str, ...] | None = None, budget: Target | None = None,
                unit: str | None = None) -> "TableSpec":
        """The same spec with the given fields replaced (command-line flags override keys)."""
        return TableSpec(self.columns, self.keep if keep is None else keep,
                         self.budget if budget is None else budget, self.unit if unit is None else unit)

    def files(self) -> list[str]:
        """Mechanism files the spec reads."""
        return [c.mechanism_file for c in self.columns if c.mechanism_file is not None]


# ------------------------------------------------------------------ parsing
def parse_table_spec(data: Mapping[str, Any], *, base_dir: str | os.PathLike | None = None) -> TableSpec:
    """A :class:`TableSpec` from the TOML structure (a dict); mechanism paths are relative to
    ``base_dir`` (the spec file's directory; default the working directory)."""
    columns = section(data, TOP_KEYS, "columns", "column to privatize")
    base = Path(base_dir) if base_dir is not None else Path(".")
    with _at("budget"):
        budget = parse_budget(data["budget"]) if "budget" in data else None
    keep = data.get("keep", [])
    if isinstance(keep, str) or not isinstance(keep, (list, tuple)):
        raise InvalidParameterError("spec", f"keep = {keep!r}", "a list of column names")
    cols = []
    loaded: dict[Path, Mechanism] = {}   # a file shared by many columns is read (and checked) once
    for name, table in columns.items():
        with _at(f"columns.{name}"):
            cols.append(_column(str(name), table, base, loaded))
    with _at(""):
        return TableSpec(tuple(cols), tuple(keep), budget, data.get("unit", "record"))


def load_spec(path: str | os.PathLike) -> TableSpec:
    """Read a TOML spec file (standard library ``tomllib``)."""
    return parse_table_spec(read_toml(path), base_dir=Path(path).parent)


def column_spec(name: str, mechanism: Mechanism | str | None, *, categories: list[str] | tuple[str, ...] | None = None,
                lower: int | None = None, upper: int | None = None, clamp: bool = False,
                mechanism_file: str | os.PathLike | None = None, target: Target | None = None,
                neighbourhood: Neighbourhood | None = None) -> ColumnSpec:
    """The column of the single-column shortcut: the domain follows the mechanism.

    A finite mechanism (cyclic noise or a square channel on ``{0..n}``) releases
    ``categories`` (exactly ``n + 1``) or integers ``lower..lower + n`` (``lower``
    default 0; a cyclic mechanism makes the domain cyclic). Noise on the integer line
    releases integers ``lower..upper`` when both are given (needed per record), else all
    integers. A bare family name (``"geometric"``, ``"rr"``) is calibrated to ``target``
    on the domain of ``categories`` or ``lower..upper``, as in a spec (``family = NAME``);
    ``neighbourhood`` replaces the mechanism's (value unit only).
    """
    if categories is not None and (lower is not None or upper is not None):
        raise InvalidParameterError("lower" if lower is not None else "upper", lower if lower is not None else upper,
                                    "no --lower/--upper with --categories (the categories' order is the domain)")
    if mechanism is None:  # only a target: what the spec form does with `epsilon` alone
        if target is None:
            raise InvalidParameterError("epsilon", None, "a target epsilon (optnoise designs the column's mechanism "
                                        "for the unit, as a spec's column with only epsilon), or a mechanism")
        domain = Domain(categories=tuple(str(c) for c in categories)) if categories is not None else \
            Domain(lower=lower, upper=upper)
        return ColumnSpec(name, domain, target=target, clamp=clamp, neighbourhood=neighbourhood)
    if isinstance(mechanism, str):  # a family NAME, calibrated to the target on the given domain
        if target is None:
            raise InvalidParameterError("epsilon", None, f"a target epsilon for the family '{mechanism}' (a bare name "
                                        "is calibrated to it), or NAME:PARAMS")
        domain = Domain(categories=tuple(str(c) for c in categories)) if categories is not None else \
            Domain(lower=lower, upper=upper)
        return ColumnSpec(name, domain, family=mechanism, target=target, clamp=clamp, neighbourhood=neighbourhood)
    size = _finite_size(mechanism)
    if categories is not None:
        if size is not None and len(categories) != size:
            raise InvalidParameterError("categories", ",".join(categories),
                                        f"exactly {size} categories (the mechanism's domain size n + 1)")
        domain = Domain(categories=tuple(str(c) for c in categories))
    elif size is not None:
        lo = 0 if lower is None else lower
        if upper is not None and upper != lo + size - 1:
            raise InvalidParameterError("upper", upper, f"{lo + size - 1} (lower + n for this mechanism) or none")
        domain = Domain(lower=lo, upper=lo + size - 1, cyclic=mechanism.kind == "cyclic")
    else:
        domain = Domain(lower=lower, upper=upper)
    return ColumnSpec(name, domain, mechanism=mechanism, clamp=clamp,
                      mechanism_file=None if mechanism_file is None else str(mechanism_file))


def _finite_size(mechanism: Mechanism) -> int | None:
    if mechanism.kind == "cyclic":
        return int(mechanism.pmf.shape[0])  # type: ignore[union-attr]
    if mechanism.kind == "channel":
        return int(mechanism.pmf.n_inputs)  # type: ignore[union-attr]
    return None


class _at:
    """Re-raise a parameter error of a nested value naming its key path (``columns.hour.epsilon``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, InvalidParameterError) and exc.parameter != "spec" and self.path \
                and not (exc.parameter + ".").startswith(self.path + "."):
            raise exc.renamed(f"{self.path}.{exc.parameter}") from exc
        return False


def _column(name: str, table: Any, base: Path, loaded: dict[Path, Mechanism] | None = None) -> ColumnSpec:
    """One column's spec; ``loaded``: the mechanism files this spec has read (by resolved path),
    so that columns sharing a file share one :class:`Mechanism` (certified once)."""
    if not isinstance(table, Mapping):
        raise InvalidParameterError("spec", f"columns.{name}", "a table of column keys")
    unknown = sorted(set(table) - set(COLUMN_KEYS))
    if unknown:
        raise InvalidParameterError(unknown[0], table[unknown[0]], f"column keys {', '.join(COLUMN_KEYS)}")
    domain = _domain(table.get("domain", {}))
    mech, path = None, None
    source = table.get("mechanism")
    if isinstance(source, Mechanism):
        mech = source
    elif source is not None:
        if not isinstance(source, (str, os.PathLike)):
            raise InvalidParameterError("mechanism", source, "a mechanism file path or a Mechanism")
        p = Path(source)
        p = p if p.is_absolute() else base / p
        key = p.resolve()
        mech = loaded.get(key) if loaded is not None else None
        if mech is None:
            mech = load_mechanism(p, parameter="mechanism")
            if loaded is not None:
                loaded[key] = mech
        path = str(p)
    family = table.get("family")
    if "params" in table:
        params = table["params"]
        if family is None or ":" in str(family) or not isinstance(params, (list, tuple)) or not params:
            raise InvalidParameterError("params", params, "a non-empty list of numbers, with family = NAME")
        family = f"{family}:{','.join(repr(p) if isinstance(p, float) else str(p) for p in params)}"
    target = _column_target(table)
    nb = _neighbourhood(table)
    cost = table.get("cost")
    if cost is not None and not isinstance(cost, str):
        raise InvalidParameterError("cost", cost, "a cost name (circular-mse, mse, er, abs, circular-abs, pow:K)")
    return ColumnSpec(name, domain, mechanism=mech, mechanism_file=path, family=family, target=target, cost=cost,
                      clamp=table.get("clamp", False), neighbourhood=nb)


def _column_target(table: Mapping[str, Any]) -> Target | None:
    """A column's target: ``epsilon`` (``delta``, ``notion``) or ``max_tpr`` + ``at_fpr`` and/or
    ``max_mu`` (:meth:`~optnoise.target.Target.of` checks the combination), or none."""
    if any(k in table for k in ATTACK_KEYS):
        values = {k: number(table[k], k) for k in ("epsilon", "delta", *ATTACK_KEYS) if k in table}
        return Target.of(notion=table.get("notion"), **values)
    if "epsilon" in table:
        return Target(number(table["epsilon"], "epsilon"), number(table.get("delta", 0.0), "delta"),
                      check_notion(table.get("notion", "dp")))
    if "delta" in table or "notion" in table:
        raise InvalidParameterError("epsilon", None, "a target epsilon > 0 beside delta/notion (a column's target is "
                                                     "epsilon = E, with optional delta = D and notion = \"dp\"; or "
                                                     "max_tpr = B with at_fpr = A, and/or max_mu = M)")
    return None


def _domain(data: Any) -> Domain:
    if not isinstance(data, Mapping):
        raise InvalidParameterError("domain", data, "{ lower = L, upper = U [, cyclic = true] } or "
                                                    "{ categories = [...] }")
    unknown = sorted(set(data) - set(DOMAIN_KEYS))
    if unknown:
        raise InvalidParameterError(f"domain.{unknown[0]}", data[unknown[0]], f"domain keys {', '.join(DOMAIN_KEYS)}")
    cats = data.get("categories")
    if cats is not None:
        if isinstance(cats, str) or not isinstance(cats, (list, tuple)):
            raise InvalidParameterError("domain.categories", cats, "a list of categories")
        cats = tuple(c if isinstance(c, str) else str(c) for c in cats)
    cyclic = data.get("cyclic", False)
    if not isinstance(cyclic, bool):
        raise InvalidParameterError("domain.cyclic", cyclic, "true or false")
    try:
        return Domain(categories=cats, lower=data.get("lower"), upper=data.get("upper"), cyclic=cyclic)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"domain.{exc.parameter}", exc.value, exc.accepted) from exc


def _neighbourhood(table: Mapping[str, Any]) -> Neighbourhood | None:
    given = [k for k in ("sd", "bd", "distances") if k in table]
    if len(given) > 1:
        raise InvalidParameterError(given[1], table[given[1]], "one of sd, bd, distances")
    directed = table.get("directed", False)
    if not isinstance(directed, bool):
        raise InvalidParameterError("directed", directed, "true or false")
    if not given:
        if directed:
            raise InvalidParameterError("directed", directed, "directed with sd, bd or distances")
        return None
    key = given[0]
    value = table[key]
    if key == "distances":
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise InvalidParameterError("distances", value, "a list of query distances")
        return Neighbourhood(tuple(tuple(v) if isinstance(v, list) else v for v in value), directed)
    value = positive_integer(value, key)
    return Neighbourhood.sd(value, directed=directed) if key == "sd" else Neighbourhood.bd(value, directed=directed)
