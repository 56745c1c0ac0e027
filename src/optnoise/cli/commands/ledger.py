"""``optnoise ledger init|show|verify``: the privacy ledger of a dataset across runs
(docs/ledger.md; the library: :mod:`optnoise.publish.ledger`)."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import app
from ..errors import cli_errors, fail
from ..options import ATTACK, AttackArgs, Json, with_groups
from ..render import column, echo_json, narrow_table, notes, out, say

ledger_app = typer.Typer(name="ledger", add_completion=False, pretty_exceptions_enable=False,
                         invoke_without_command=True,
                         help="The privacy ledger of a dataset: every run's spend, composed over its lifetime "
                              "(init, show, verify).")


@ledger_app.callback()
def _group(ctx: typer.Context) -> None:
    """Without a subcommand: the help, exit 0."""
    if ctx.invoked_subcommand is None:
        out.print(ctx.get_help(), highlight=False)

#: Library parameters -> what the user typed.
FLAGS = {"ledger": "ledger", "epsilon": "--budget-epsilon", "delta": "--budget-delta", "budget": "--budget-epsilon"}

LedgerPath = Annotated[Path, typer.Argument(help="The ledger file (SQLite).", show_default=False)]


@ledger_app.command("init")
@cli_errors(FLAGS)
@with_groups(ATTACK)   # --max-tpr/--at-fpr/--max-mu: a lifetime budget in attack terms, declared once
def init(
    path: LedgerPath,
    attack_target: AttackArgs,
    dataset: Annotated[str, typer.Option("--dataset", help="The dataset's name (every run must name it).")],
    unit: Annotated[str, typer.Option("--unit", help="The privacy unit (e.g. household; every run must name it).")],
    budget_epsilon: Annotated[Optional[float], typer.Option(
        "--budget-epsilon", help="The lifetime budget's epsilon (with --budget-delta, default 0: pure).")] = None,
    budget_delta: Annotated[Optional[float], typer.Option(
        "--budget-delta", help="The lifetime budget's delta (approximate DP).")] = None,
    as_json: Json = False,
) -> None:
    """Create a new ledger for one dataset and one privacy unit under a lifetime budget."""
    from ...publish.ledger import Ledger
    from ...target import Target
    a = attack_target
    budget = Target.of(budget_epsilon, budget_delta, max_tpr=a.max_tpr, at_fpr=a.at_fpr, max_mu=a.max_mu)
    if budget is None:
        raise InvalidParameterError("--budget-epsilon", None, "a lifetime budget: --budget-epsilon (with "
                                    "--budget-delta), or --max-tpr with --at-fpr, and/or --max-mu")
    ledger = Ledger.init(path, dataset=dataset, unit=unit, budget=budget)
    doc = ledger.show()
    if as_json:
        echo_json(doc)
        return
    say(f"ledger {path}: dataset {dataset!r}, unit {unit!r}")
    say(f"lifetime budget {budget.describe()}")


@ledger_app.command("show")
@cli_errors(FLAGS)
def show(path: LedgerPath, as_json: Json = False) -> None:
    """Each run (when, spec hash, statistics, spend), the running total in (epsilon, delta) and attack
    terms, and what remains."""
    from ...publish.ledger import Ledger
    doc = Ledger(path, write=False).show()
    if as_json:
        echo_json(doc)
        return
    _render(doc)


@ledger_app.command("verify")
@cli_errors(FLAGS)
def verify(path: LedgerPath, as_json: Json = False) -> None:
    """Recompute every running total from the stored mechanisms (exit 1 on any mismatch)."""
    from ...publish.ledger import Ledger
    report = Ledger(path, write=False).verify(strict=False)
    if as_json:
        echo_json(report)
    elif report["ok"]:
        from ...publish.spend import shown
        t = report["total"]
        say(f"ledger {path} verifies: {report['runs']} run(s) ({report['delivered']} delivered, "
            f"{report['reserved']} reserved)")
        say(f"every running total recomputed from {report['mechanisms']} stored mechanism(s)")
        if t is not None:
            say(f"total: basic eps {shown(t['basic']['epsilon'])}, delta {shown(t['basic']['delta'], 3)}; PLD eps "
                f"{shown(t['pld']['epsilon'])} at delta {t['pld']['delta']:g}")
    if not report["ok"]:
        first = report["mismatches"][0]
        fail(1, f"ledger {path} does not verify: {first} ({len(report['mismatches'])} mismatch(es) in all)")


def _render(doc: dict) -> None:
    """The human view of ``ledger show``: one row per run, readable at 80 columns; totals rounded
    up, what remains rounded down (:func:`~optnoise.publish.spend.shown`)."""
    from ...publish.spend import shown
    budget = doc["budget"]
    words = (f"eps {budget['epsilon']:g}, delta {budget['delta']:g}" if budget["notion"] != "attack" else
             ", ".join(f"{k} {budget[k]:g}" for k in ("max_tpr", "at_fpr", "max_mu") if budget.get(k) is not None))
    say(f"ledger {doc['ledger']}: dataset {doc['dataset']!r}, unit {doc['unit']!r}")
    say(f"lifetime budget {words}")
    rows = [[str(r["seq"]), (r["reserved_at"] or "")[:10], r["state"], ", ".join(r["statistics"]) or "-",
             shown(r["spend"]["basic"]["epsilon"], 4), shown(r["total"]["basic"]["epsilon"], 4),
             shown(r["total"]["pld"]["epsilon"], 4), shown(r["total"]["attack"]["tpr_at_fpr"].get("0.05"), 4),
             _left(r["remaining"])] for r in doc["runs"]]
    heads = ["run", "reserved (UTC)", "state", "statistics", "spend eps", "total eps basic", "total eps PLD",
             "TPR at FPR 0.05", "left"]
    if not rows:
        say("no run recorded yet")
        return
    table = narrow_table("runs (each counts, delivered or not)")
    for i, head in enumerate(heads):
        column(table, head, left=i in (1, 2, 3), cells=[row[i] for row in rows])
    for row in rows:
        table.add_row(*row)
    out.print(table)
    pld = doc["total"]["pld"]
    notes([f"PLD epsilons at delta {pld['delta']:g}; TPR: the best attacker's, at FPR 0.05",
           "every number a proven bound, rounded outward (totals up, what is left down)",
           "left: epsilon at the budget's delta, or the attacker's TPR (or mu) headroom",
           f"{doc['undelivered']} run(s) reserved and never delivered (they still count)"])


def _left(remaining: dict) -> str:
    """What remains, in one cell (rounded down): epsilon, or the attacker's headroom (TPR, else mu)."""
    from ...publish.spend import shown
    if "epsilon" in remaining:
        return shown(remaining["epsilon"], 4, up=False)
    tpr = remaining.get("tpr_at_fpr")
    return shown(next(iter(tpr.values())) if tpr else remaining.get("mu_gdp"), 4, up=False)


app.add_typer(ledger_app, name="ledger")
