"""``optnoise sample``: draws from any mechanism, exactly as certified."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ...seeded import NOT_PRIVATE, withhold
from ..app import command
from ..inputs import releasable
from ..options import LIMITS, NEIGHBOURHOOD, TARGET, WRITES, Json, NeighbourhoodArgs, Seed, TargetArgs, Writes
from ..render import fmt, say, warn_seed
from .shared import deliver

if TYPE_CHECKING:
    import numpy as np


@command(NEIGHBOURHOOD, TARGET, LIMITS, WRITES, flags={"path": "--mechanism"})
def sample(
    nb: NeighbourhoodArgs,
    target: TargetArgs,
    max_memory: Optional[int],
    writes: Writes,
    count: Annotated[int, typer.Option("--count", help="Number of draws (>= 0).")],
    mechanism: Annotated[Optional[Path], typer.Option(
        "--mechanism", help="A mechanism file (design, staircase --discrete, wasserstein, rr, families --output) "
                            "or a plain PMF file (cyclic noise).")] = None,
    family: Annotated[Optional[str], typer.Option(
        "--family", help="Or a built-in family NAME:PARAMS (see 'optnoise families').")] = None,
    answer: Annotated[Optional[int], typer.Option(
        "--answer", help="For a channel: the true answer (input index) whose outputs are drawn.")] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", help="Write the draws to PATH.npy or PATH.csv (atomically).")] = None,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Draw from a mechanism exactly as certified (quantized weights, OS CSPRNG by default)."""
    import numpy as np

    from ...io import DRAW_FORMATS, write_draws
    if isinstance(count, bool) or count < 0:
        raise InvalidParameterError("--count", count, "an integer >= 0")
    if output is not None and output.suffix.lower() not in DRAW_FORMATS:
        raise InvalidParameterError("--output", str(output), "a path ending in .npy or .csv")
    mech = releasable(mechanism, family, nb, target, max_memory)
    try:
        q = mech.quantize()
    except InvalidParameterError as exc:  # a target the file carries, not one typed: name the file
        if exc.parameter != "target" or target.given:
            raise
        raise exc.renamed("--mechanism" if mechanism is not None else "--family") from exc
    draws = mech.sample(count, seed=seed, answer=answer, max_memory=max_memory)
    values = np.asarray(draws)
    if output is not None:
        write_draws(values, output, force=writes.force, reads=writes.reads)
    warn_seed(seed, as_json)  # once nothing can fail: a failure prints its one line only
    payload = {"count": int(count), "kind": mech.kind, "certificate": q.certificate.to_json(),
               "private": bool(draws.private), "randomness": draws.randomness,
               "quantized": {k: v for k, v in q.to_json(weights=False).items() if k != "certificate"},
               "bits": getattr(q, "bits", None), "mixing": str(getattr(q, "mixing", "0")),
               "target": None if mech.target is None else mech.target.to_json(),
               "output": str(output) if output is not None else None}
    if output is None:
        payload["samples"] = values.tolist()
    if not draws.private:   # seeded: the certificate holds only for unseeded draws
        payload = withhold(payload, [("certificate",)])
    source = mechanism if mechanism is not None else family
    deliver(payload, as_json=as_json, render=lambda p: _print(p, q.certificate if draws.private else None, source,
                                                              values))


def _print(p: dict, c, source, values: "np.ndarray") -> None:
    if c is not None:
        say(f"{p['count']} draws from {source} ({p['kind']}); certified pure eps {fmt(c.epsilon_pure)}"
            + (f", delta_DP {fmt(c.delta_dp)}, delta_PDP {fmt(c.delta_pdp)} at eps {c.epsilon:g}" if c.epsilon else ""))
    else:
        say(f"{p['count']} draws from {source} ({p['kind']}); {NOT_PRIVATE}")
    say(f"randomness: {p['randomness']}; private: {p['private']}")
    if p["output"] is not None:
        say(f"wrote {p['output']}")
    else:
        say(" ".join(str(v) for v in values.tolist()[:200]) + (" ..." if p["count"] > 200 else ""))

