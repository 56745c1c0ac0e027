"""``optnoise families``: the built-in families; ``--family X --output F`` saves one as a mechanism file."""

from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import family_mechanism
from ..inputs import target as target_of
from ..options import LIMITS, NEIGHBOURHOOD, TARGET, WRITES, Json, NeighbourhoodArgs, Output, TargetArgs, Writes
from ..render import echo_json, out, say
from .shared import save_mechanism


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
    from rich.markup import escape
    from rich.table import Table

    from ...families import FAMILIES
    if (family is None) != (output is None):
        raise InvalidParameterError("--family/--output", family if family is not None else str(output),
                                    "both --family and --output, or neither")
    if family is not None:
        mech = family_mechanism(family, nb, target_of(target), max_memory=max_memory)
        path = save_mechanism(mech, output, writes)  # type: ignore[arg-type]
        payload = {"family": family, "output": path, "mechanism": mech.to_json()}
        if as_json:
            echo_json(payload)
        else:
            say(f"wrote {path}: {family} ({mech.kind}), neighbourhood {mech.neighbourhood.describe()}")
        return
    if nb.given or target.given:
        raise InvalidParameterError("--distances/--sd/--bd/--epsilon", "given", "neighbourhood and target flags only "
                                    "with --family and --output")
    if as_json:
        echo_json({"families": [f.to_json() for f in FAMILIES.values()]})
        return
    table = Table(title="optnoise families")
    for col in ("name:params", "space", "description"):
        table.add_column(col)
    for f in FAMILIES.values():
        table.add_row(*(escape(c) for c in (f"{f.name}:{f.params}", f.space, f.description)))
    out.print(table)
