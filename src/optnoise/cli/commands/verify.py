"""``optnoise verify``: exactly what a mechanism guarantees."""

from typing import Annotated, Any, Optional

import typer

from ...errors import InvalidParameterError
from ...target import check_delta, check_epsilon
from ..app import command
from ..inputs import mechanism_from_source
from ..options import (
    LIMITS, NEIGHBOURHOOD, SECONDS, SOURCE, WRITES, AttackFlag, Json, NeighbourhoodArgs, Output, Plot, SourceArgs,
    Writes,
)
from ..render import key_value_table, notes
from .shared import check_png, deliver, parse_list, plots


@command(SOURCE, NEIGHBOURHOOD, LIMITS, SECONDS, WRITES)
def verify(
    source: SourceArgs,
    nb: NeighbourhoodArgs,
    max_memory: Optional[int],
    max_seconds: Optional[float],
    writes: Writes,
    epsilon: Annotated[Optional[float], typer.Option(
        "--epsilon", help="Report delta_DP and delta_PDP at this epsilon (>= 0).")] = None,
    delta: Annotated[Optional[float], typer.Option(
        "--delta", help="Report the smallest epsilon_DP and epsilon_PDP at this delta (0 <= delta < 1).")] = None,
    compose_k: Annotated[Optional[int], typer.Option(
        "--compose", help="Also report the guarantee after K releases: the best of exact enumeration, "
                          "dp_accounting PLDs, RDP and the pure/basic bounds (JSON says which won).")] = None,
    renyi: Annotated[Optional[str], typer.Option(
        "--renyi", help="Also report the Rényi curve at these orders (> 0, 'inf' allowed), e.g. 1.5,2,4,8,inf, "
                        "and the zCDP rho.")] = None,
    exact: Annotated[bool, typer.Option(
        "--exact", help="Rational arithmetic with outward rounding: a certificate that is never optimistic.")] = False,
    attack: AttackFlag = False,
    fpr: Annotated[Optional[str], typer.Option(
        "--fpr", help="With --attack: false-positive rates, comma-separated (default 0.001,0.01,0.05,0.1).")] = None,
    prior_odds: Annotated[Optional[str], typer.Option(
        "--prior-odds", help="With --attack: the attacker's prior odds for the value x against x', e.g. 1:1 "
                             "(default) or 1:99.")] = None,
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Exact privacy of a mechanism: tight pure epsilon, delta_DP/delta_PDP at --epsilon, epsilon at --delta.

    Example: optnoise verify --pmf 0.5432,0.1212,0.1212,0.1212,0.027,0.027,0.027,0.006,0.006
    --bd 3 --directed --epsilon 1.505 --normalize
    """
    from ...analysis import guarantee, privacy_profile   # the analysis loads when a mechanism is verified
    if attack:
        from ...analysis.tradeoff import check_fpr, parse_odds
    eps = None if epsilon is None else check_epsilon(epsilon, parameter="--epsilon")
    dlt = None if delta is None else check_delta(delta, parameter="--delta")
    if compose_k is not None and compose_k < 1:
        raise InvalidParameterError("--compose", compose_k, "an integer K >= 1")
    if compose_k is not None and eps is None and dlt is None and not attack:
        raise InvalidParameterError("--compose", compose_k, "together with --epsilon, --delta and/or --attack")
    for flag, given in (("--fpr", fpr), ("--prior-odds", prior_odds)):
        if given is not None and not attack:
            raise InvalidParameterError(flag, given, "together with --attack")
    fprs = None if fpr is None else [check_fpr(a, "--fpr") for a in parse_list(
        fpr, "--fpr", "comma-separated false-positive rates in [0, 1], e.g. 0.001,0.01")]
    odds = 1.0 if prior_odds is None else parse_odds(prior_odds, "--prior-odds")
    orders = None if renyi is None else parse_list(renyi, "--renyi", "comma-separated Rényi orders > 0 "
                                                                     "(inf allowed), e.g. 1.5,2,4,8")
    if orders is not None and any(not a > 0 for a in orders):
        raise InvalidParameterError("--renyi", renyi, "comma-separated Rényi orders > 0 (inf allowed), e.g. 1.5,2,4,8")
    check_png(plot)
    mech = mechanism_from_source(source, nb, max_memory)
    if exact:
        from ...analysis.pairs import check_exact_time
        check_exact_time(mech.pmf, mech.neighbourhood, max_seconds)
    profile = mech.certify(max_memory=max_memory) if exact else privacy_profile(mech.pmf, mech.neighbourhood,
                                                                                 max_memory=max_memory)
    result: dict[str, Any] = guarantee(profile, eps, dlt).to_json()
    result["space"] = profile.space
    result["normalized"] = bool(getattr(mech.pmf, "normalized", False))
    result["notions"] = {"delta_dp": "approximate DP (hockey-stick)", "delta_pdp": "probabilistic DP (Kadam Def. 2)"}
    if eps is not None:
        result["worst_pair_dp"] = profile.worst_pair(eps, "dp")
        result["worst_pair_pdp"] = profile.worst_pair(eps, "pdp")
    if compose_k is not None:
        result["composed"] = mech.compose(compose_k, epsilon=eps, delta=dlt, max_memory=max_memory).to_json() \
            if eps is not None or dlt is not None else {"k": compose_k}
    curve = _attack(result, profile, fprs, odds, compose_k) if attack else None
    if orders is not None:
        from ...families import renyi_analysis
        result.update(renyi_analysis(mech.privacy, orders, family=source.family).to_json())
    nb_text = mech.neighbourhood.describe()
    deliver(result, as_json=as_json, render=lambda r: _print(r, nb_text), mechanism=mech, output=output,
            writes=writes, plot=plot, draw=lambda path: _draw(path, mech, profile, curve, result))


def _attack(result: dict[str, Any], profile: Any, fprs: Optional[list], odds: float, compose_k: Optional[int]) -> Any:
    """``--attack``: the best attacker's readout (and after ``--compose`` K releases); the curve."""
    from ...analysis.readout import DEFAULT_FPRS
    from ...analysis.tradeoff import tradeoff_of   # imported where used: start-up (issue 37)
    from ...analysis.tradeoff_composition import compose_tradeoff
    words = {"subject": "the query answer", "value": "x", "other": "x'", "qualifier": " (any neighbouring pair)"}
    curve = tradeoff_of(profile)
    result["attack"] = curve.readout(fprs or DEFAULT_FPRS, odds).to_json(**words)
    if compose_k is not None:
        result["composed"]["attack"] = compose_tradeoff([(profile, compose_k)]).readout(
            fprs or DEFAULT_FPRS, odds).to_json(**words)
    return curve


def _draw(path: Any, mech: Any, profile: Any, curve: Any, result: dict[str, Any]) -> None:
    """``--plot``: the privacy profile, or with ``--attack`` the attacker's curve."""
    nb_text = mech.neighbourhood.describe()
    if curve is None:
        plots().plot_profile(profile, path, title=f"Privacy profile, neighbourhood {nb_text}", force=True)
        return
    short = nb_text if len(nb_text) <= 40 else nb_text[:37] + "..."
    plots().plot_tradeoff({mech.name: curve}, path, mu=result["attack"]["mu_gdp"], epsilon=profile.epsilon_pure,
                          title=f"What an attacker who knows everything else can learn ({mech.name}; "
                                f"neighbours {short}): telling x from x'", force=True)


def _print(r: dict[str, Any], nb_text: str) -> None:
    rows: list[tuple[str, Any]] = [("space", r["space"]), ("neighbourhood", nb_text), ("epsilon_pure", r["epsilon_pure"])]
    meanings = {"space": "cyclic: added mod n+1; integer: noise on Z; channel: P[input, output]",
                "neighbourhood": "query distances mu = Q(X) - Q(X'), or input pairs",
                "epsilon_pure": "tight pure epsilon (delta = 0)"}
    if r["epsilon"] is not None:
        at = f"@ eps={r['epsilon']:g}"
        rows += [(f"delta_dp {at}", r["delta_dp"]), (f"delta_pdp {at}", r["delta_pdp"])]
        meanings.update({f"delta_dp {at}": "approximate DP (hockey-stick), tight",
                         f"delta_pdp {at}": "probabilistic DP (Kadam Def. 2)"})
    if r["delta"] is not None:
        at = f"@ delta={r['delta']:g}"
        rows += [(f"epsilon_dp {at}", r["epsilon_dp"]), (f"epsilon_pdp {at}", r["epsilon_pdp"])]
        meanings.update({f"epsilon_dp {at}": "smallest epsilon, approximate DP",
                         f"epsilon_pdp {at}": "smallest epsilon, PDP"})
    if "composed" in r:
        c = r["composed"]
        for key in ("delta_dp", "epsilon_dp"):
            if c.get(key) is not None:
                rows.append((f"composed k={c['k']}: {key}", c[key]))
                kind = "exact" if c.get("exact", {}).get(key) else "proven bound"
                meanings[f"composed k={c['k']}: {key}"] = f"{kind}, from {c['bound'][key]}"
    for key, label in (("attack", "attack"), ("composed", f"composed k={r.get('composed', {}).get('k')}: attack")):
        a = r.get(key, {}).get("attack") if key == "composed" else r.get("attack")
        if a is None:
            continue
        for alpha, tpr in a["tpr_at_fpr"].items():
            rows.append((f"{label}: TPR @ FPR={alpha}", tpr))
            meanings[f"{label}: TPR @ FPR={alpha}"] = "best attacker's true-positive rate at this false-positive rate"
        rows += [(f"{label}: advantage", a["advantage"]), (f"{label}: mu_gdp", a["mu_gdp"]),
                 (f"{label}: posterior", a["posterior"])]
        meanings.update({f"{label}: advantage": "max TPR - FPR (total variation)",
                         f"{label}: mu_gdp": "smallest Gaussian-DP mu whose curve is below the attacker's",
                         f"{label}: posterior": f"largest posterior of x from prior odds {a['prior_odds']:g}:1"})
    if "renyi" in r:
        for order, value in r["renyi"].items():
            rows.append((f"renyi eps(alpha={order})", value))
            meanings[f"renyi eps(alpha={order})"] = "Rényi DP, max over neighbouring pairs"
        rows.append(("zcdp_rho", r["zcdp_rho"]))
        meanings["zcdp_rho"] = "sup over alpha of eps(alpha) / alpha"
    # every value is an upper bound (or exact): printed rounded up, never below its float
    from ...analysis.readout import significant_up
    key_value_table("optnoise verify", [(k, significant_up(v) if isinstance(v, float) else v) for k, v in rows],
                    meanings=meanings)
    lines = []
    if r["normalized"]:
        lines.append("masses were rescaled exactly to sum to 1 (--normalize, or a sum within 1e-9 of 1)")
    lines.append("values are exact (rational, rounded outward)" if r["exact"] else
                 "float mode; use --exact for a certificate rounded outward")
    if "renyi" in r:
        lines.append(f"Rényi values: {r['renyi_basis']}" + (f"; {r['renyi_note']}" if "renyi_note" in r else ""))
    if "attack" in r:
        a = r["attack"]
        lines.append(f"attack ({a['method']}): {a['in_words']}")
    if "attack" in r.get("composed", {}):
        c = r["composed"]
        lines.append(f"after {c['k']} releases ({c['attack']['method']}): {c['attack']['in_words']}")
    notes(lines)   # the files written: deliver's "wrote ..." lines

