"""``optnoise families``: the built-in families; ``--family X --output F`` saves one as a mechanism file."""

from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import family_mechanism
from ..inputs import target as target_of
from ..options import LIMITS, NEIGHBOURHOOD, TARGET, WRITES, Json, NeighbourhoodArgs, Output, TargetArgs, Writes
from ..render import out, say
from .shared import deliver


@command(NEIGHBOURHOOD, TARGET, LIMITS, WRITES)
def families(
    nb: NeighbourhoodArgs,
    target: TargetArgs,
    max_memory: Optional[int],
    writes: Writes,
    family: Annotated[Optional[str], typer.Option(
        "--family", help="With --output: save this family NAME:PARAMS as a mechanism file.")] = None,
    output: Output = None,
    as_json: Json = False,
) -> None:
    """List the built-in noise families usable as --family NAME:PARAMS (or save one with --family and --output)."""
    from ...families import FAMILIES
    if (family is None) != (output is None):
        raise InvalidParameterError("--family/--output", family if family is not None else str(output),
                                    "both --family and --output, or neither")
    if family is not None:
        mech = family_mechanism(family, nb, target_of(target), max_memory=max_memory)
        deliver({"family": family, "mechanism": mech.to_json()}, as_json=as_json, mechanism=mech, output=output,
                writes=writes, with_report=False, render=lambda p: say(f"wrote {p['output']}: {family} ({mech.kind}), "
                                                                        f"neighbourhood {mech.neighbourhood.describe()}"))
        return
    if nb.given or target.given:
        raise InvalidParameterError("--distances/--sd/--bd/--epsilon", "given", "neighbourhood and target flags only "
                                    "with --family and --output")
    deliver({"families": [f.to_json() for f in FAMILIES.values()]}, as_json=as_json, render=_print)


def _print(p: dict) -> None:
    from rich.markup import escape
    from rich.table import Table
    table = Table(title="optnoise families")
    for col in ("name:params", "space", "description"):
        table.add_column(col)
    for f in p["families"]:
        table.add_row(*(escape(c) for c in (f"{f['name']}:{f['params']}", f["space"], f["description"])))
    out.print(table)
