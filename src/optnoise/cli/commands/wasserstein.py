"""``optnoise wasserstein``: Qin et al.'s Wasserstein-optimal noise on Z, solved exactly by LP."""

from contextlib import nullcontext
from typing import Annotated, Optional

import typer

from ..app import command
from ..options import LIMITS, WRITES, Json, Output, Plot, TimeLimit, Writes
from ..render import err, key_value_table
from .shared import check_png, deliver, plots


@command(LIMITS, WRITES)
def wasserstein(
    max_memory: Optional[int],
    writes: Writes,
    input_spec: Annotated[str, typer.Option(
        "--input", help="gaussian:MU,SIGMA | poisson:LAMBDA | pmf-file:PATH (the input X on Z).")],
    sensitivity: Annotated[int, typer.Option(
        "--sensitivity", help="Adjacency m (integer >= 1): neighbours differ by at most m.")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0): pure eps-DP.")],
    objective: Annotated[str, typer.Option(
        "--objective", help="w1 (exact W1(X, X+noise)) or expected-abs (the paper's P2 = E|noise|).")] = "w1",
    window: Annotated[Optional[int], typer.Option(
        "--window", help="Noise window half-width L (default max(span of X, 4m)).")] = None,
    time_limit: TimeLimit = None,
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Qin et al.: eps-DP noise on Z minimising the Wasserstein distance W1(X, X + noise), solved exactly by LP.

    Example: optnoise wasserstein --input gaussian:0,10 --sensitivity 15 --epsilon 2
    """
    from ...design.wasserstein import design_wasserstein, input_distribution
    from ...target import check_epsilon, check_sensitivity
    check_png(plot)
    eps = check_epsilon(epsilon, allow_zero=False, parameter="--epsilon")
    m = check_sensitivity(sensitivity, parameter="--sensitivity")
    x, dropped, desc = input_distribution(input_spec, max_memory=max_memory)
    with err.status("solving the Wasserstein LP", spinner="dots") if not as_json else nullcontext():
        des = design_wasserstein(x, eps, m, objective=objective, half_width=window,
                                 input_description=desc, input_dropped_mass=dropped, time_limit=time_limit,
                                 max_memory=max_memory)

    def render(result: dict) -> None:
        rows = [(k, result[k]) for k in ("input", "objective", "epsilon", "sensitivity", "w1", "expected_abs_noise",
                                         "epsilon_pure", "tail_mass", "solve_seconds")]
        rows.append(("window", f"{des.pmf.lo}..{des.pmf.hi} + geometric tails (period {m})"))
        key_value_table("optnoise wasserstein (Qin et al.)", rows)

    deliver(des.to_json(), as_json=as_json, render=render, mechanism=des.mechanism, output=output, writes=writes, plot=plot,
            draw=lambda path: plots().plot_pmf(des.pmf.probs, path, offset=des.pmf.offset,
                                               title=f"{objective}-optimal noise, input {desc}, m={m}, eps={eps:g}", force=True))
