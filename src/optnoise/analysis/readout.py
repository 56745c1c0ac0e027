"""What the best attacker can reach, read off a trade-off curve, and said in words.

The readouts of :class:`~optnoise.analysis.tradeoff.TradeOff` (the exact curve, or a
composition's: :mod:`~optnoise.analysis.tradeoff_composition`) as an :class:`AttackReadout`;
the same readouts bounded from ``(epsilon, delta)`` guarantees alone
(:func:`profile_readout`); ``Phi^-1`` at :data:`PROBIT_BITS` bits (:func:`probit`); the
sentence of a readout (:func:`attack_words`, percentages rounded up); and the reference
curves of Gaussian DP and ``(epsilon, delta)``-DP (Dong, Roth & Su 2022). Definitions and
the argument for each readout: :mod:`~optnoise.analysis.tradeoff` and docs/attacks.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

import numpy as np

from ..errors import InvalidParameterError
from ..target import check_odds, check_rate
from .exact import float_up

DEFAULT_FPRS: tuple[float, ...] = (0.001, 0.01, 0.05, 0.1)
#: Bits of the high-precision ``Phi^-1`` and the margin added before rounding up.
PROBIT_BITS = 300
PROBIT_MARGIN = Fraction(1, 10 ** 60)
def probit(x: Fraction) -> Fraction:
    """``Phi^-1(x)`` for a rational ``0 < x < 1``, within ``2^-250`` (a private mpmath context
    at :data:`PROBIT_BITS` bits; Newton's method on ``ln Phi(z) = ln x``, which converges in
    the far tails too, stopped when a step is below ``2^-(PROBIT_BITS - 20)``)."""
    if x > Fraction(1, 2):
        return -probit(1 - x)
    if x == Fraction(1, 2):
        return Fraction(0)
    from mpmath import MPContext
    ctx = MPContext()
    ctx.prec = PROBIT_BITS
    target = ctx.log(ctx.mpf(x.numerator)) - ctx.log(ctx.mpf(x.denominator))
    z = -ctx.sqrt(-2 * target)  # the tail's asymptote: a start within a step or two
    for _ in range(200):
        phi, cdf = ctx.npdf(z), ctx.ncdf(z)
        step = (ctx.log(cdf) - target) * cdf / phi
        z -= step
        if abs(step) < ctx.ldexp(1, -(PROBIT_BITS - 20)):
            break
    sign, man, exp, _ = z._mpf_  # the exact binary value of z
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


@dataclass(frozen=True)
class AttackReadout:
    """What the best attacker can reach (docs/attacks.md; CLI key ``attack``).

    ``tpr_at_fpr`` maps each FPR to the largest TPR; ``advantage`` is ``max TPR - FPR``;
    ``mu_gdp`` the smallest Gaussian-DP ``mu`` whose curve lies below the mechanism's;
    ``posterior`` the largest posterior probability of ``x`` from prior odds ``prior_odds``.
    ``method`` says how the curve was obtained: ``"exact"`` (rational, rounded up),
    ``"float"``, ``"exact composition"`` or ``"dominating"`` (a lower bound of the curve
    from a composed ``delta(eps)`` upper bound). ``worst_pair`` names a pair attaining each
    value (the composed pair for compositions).
    """

    tpr_at_fpr: dict
    advantage: float
    mu_gdp: float
    posterior: float
    prior_odds: float
    exact: bool
    method: str
    worst_pair: dict = field(default_factory=dict)

    def tpr(self, fpr: float) -> float:
        return self.tpr_at_fpr[float(fpr)]

    def to_json(self, **words: str) -> dict:
        """The JSON keys (docs/cli.md); with ``words`` (:func:`attack_words`'s keywords) also
        ``in_words``, the readout's sentence at FPR 0.05 (or the first FPR asked for)."""
        out = {"tpr_at_fpr": {f"{a:g}": v for a, v in self.tpr_at_fpr.items()}, "advantage": self.advantage,
               "mu_gdp": self.mu_gdp, "posterior": self.posterior, "prior_odds": self.prior_odds,
               "exact": self.exact, "method": self.method, "worst_pair": dict(self.worst_pair)}
        if words:
            fpr = 0.05 if 0.05 in self.tpr_at_fpr else next(iter(self.tpr_at_fpr))
            out["in_words"] = attack_words(self, fpr=fpr, **words)
        return out


def check_fpr(alpha: object, parameter: str = "fpr") -> float:
    """A false-positive rate: a real number with ``0 <= alpha <= 1`` (:func:`optnoise.target.check_rate`)."""
    return check_rate(alpha, parameter=parameter)


def parse_odds(text: str | float, parameter: str = "prior_odds") -> float:
    """Prior odds written ``"a:b"`` (``a`` for ``x`` against ``b`` for ``x'``) or as one number."""
    if isinstance(text, str) and ":" in text:
        a, _, b = text.partition(":")
        try:
            num, den = float(a), float(b)
        except ValueError as exc:
            raise InvalidParameterError(parameter, text, "odds 'a:b' with a, b > 0 (e.g. 1:1 or 1:99), "
                                        "or one number > 0") from exc
        if not (num > 0 and den > 0 and math.isfinite(num) and math.isfinite(den)):
            raise InvalidParameterError(parameter, text, "odds 'a:b' with a, b > 0 (e.g. 1:1 or 1:99)")
        return check_odds(num / den, parameter)
    return check_odds(text, parameter)




#: ``e^eps`` from :func:`~optnoise.analysis.exact.exp_lower` (within ``2^-250`` below) times
#: this is at least ``e^eps``: an upper bound of the factor.
EXP_UP = 1 + Fraction(1, 2 ** 249)


def profile_readout(points: Iterable[tuple[float, float]], *, pure: float, symmetric: bool,
                    fprs: Iterable[float] = DEFAULT_FPRS) -> AttackReadout:
    """The best attacker bounded from ``(epsilon, delta)`` guarantees alone: fast, proven, not tight.

    Each point ``(eps_i, delta_i)`` must be a proven guarantee of every ordered pair (for
    example the composed privacy profile ``delta(eps)`` of
    :func:`optnoise.analysis.composition.delta_curve` on a grid, or a total's PLD and basic
    bounds); ``pure`` a proven pure epsilon (``inf`` if none). By DRS Prop. 2.5 each point
    is a line below the trade-off curve, ``T(alpha) >= 1 - delta_i - e^eps_i alpha``, and,
    when the pairs are closed under swapping (``symmetric``; the reversed pair has the same
    guarantee), also ``T(alpha) >= e^-eps_i (1 - delta_i - alpha)``. Any subset of true lines
    gives a valid bound, so:

    * ``tpr_at_fpr``: ``min(1, min_i e^eps_i alpha + delta_i, min_i 1 - e^-eps_i (1 - delta_i - alpha))``
      (the second only when ``symmetric``); for a pure total (one point ``(eps, 0)``) this is
      the closed form ``min(e^eps alpha, 1 - e^-eps (1 - alpha))``;
    * ``advantage``: ``min_i (e^eps_i - 1 + 2 delta_i) / (e^eps_i + 1)`` (the largest
      ``1 - f - alpha`` of the symmetric ``f_{eps,delta}``, at its kink
      ``alpha = (1 - delta) / (e^eps + 1)``), else ``min_i 1 - (1 - delta_i) e^-eps_i``;
    * ``posterior`` (prior odds 1:1): ``e^pure / (1 + e^pure)``, the likelihood ratio being at
      most ``e^pure`` (1 without a pure epsilon);
    * ``mu_gdp``: of the pure curve alone, ``2 Phi^-1(e^pure / (1 + e^pure))`` (docs/attacks.md;
      infinite without a pure epsilon).

    Exact arithmetic: every ``e^eps`` is a rational above the true value
    (:func:`~optnoise.analysis.exact.exp_lower` times :data:`EXP_UP`) and ``e^-eps`` its
    reciprocal (below); every expression is monotone in them in the safe direction; the
    values are rationals rounded up to floats (``Phi^-1`` at :data:`PROBIT_BITS` bits plus
    :data:`PROBIT_MARGIN`). ``method``: ``"privacy profile"``; ``worst_pair`` names the point
    that gave each value.
    """
    from .exact import exp_lower
    lines = []
    for eps, dlt in points:
        eps, dlt = float(eps), float(dlt)
        if not (0 <= eps < 700 and 0 <= dlt <= 1):   # e^eps beyond a float: a line that never wins
            continue
        up = exp_lower(eps) * EXP_UP
        lines.append((up, Fraction(dlt), f"epsilon {eps:.6g}, delta {dlt:.3g}"))
    if math.isfinite(pure) and pure < 700:
        lines.append((exp_lower(pure) * EXP_UP, Fraction(0), f"pure epsilon {pure:.6g}"))
    if not lines:
        raise InvalidParameterError("points", [], "at least one (epsilon, delta) guarantee with epsilon < 700")
    tprs, worst = {}, {}
    for a in fprs:
        a = check_fpr(a)
        fa = Fraction(a)
        cands = [(e * fa + d, label) for e, d, label in lines]
        if symmetric:
            cands += [(1 - (1 - d - fa) / e, label) for e, d, label in lines]
        value, label = min(cands, key=lambda c: c[0])
        tprs[a] = float_up(min(Fraction(1), value))
        worst[f"tpr_at_fpr {a:g}"] = label if value < 1 else "none: every line allows a TPR of 1"
    if symmetric:
        advs = [((e - 1 + 2 * d) / (e + 1), label) for e, d, label in lines]
    else:
        advs = [(1 - (1 - d) / e, label) for e, d, label in lines]
    adv, worst["advantage"] = min(advs, key=lambda c: c[0])
    if math.isfinite(pure) and pure < 700:
        e = lines[-1][0]
        post, mu = e / (1 + e), 2 * probit(e / (1 + e)) + PROBIT_MARGIN
        worst["posterior"] = worst["mu_gdp"] = lines[-1][2]
        post_up, mu_up = float_up(post), float_up(mu)
    else:
        post_up, mu_up = 1.0, math.inf
        worst["posterior"] = worst["mu_gdp"] = "no pure epsilon"
    return AttackReadout(tprs, float_up(min(Fraction(1), max(Fraction(0), adv))), mu_up, post_up, 1.0, False,
                         "privacy profile", worst)


# ------------------------------------------------------------------ words
def percent_up(x: float, digits: int = 2) -> str:
    """``x`` as a percentage with ``digits`` significant digits (more when needed to stay below
    100%), rounded *up*: never a smaller attacker than the number it stands for."""
    from decimal import ROUND_CEILING, Decimal
    if x <= 0:
        return "0%"
    if x >= 1:
        return "100%"
    d = Decimal(repr(float(x))) * 100
    for more in range(8):
        step = Decimal(1).scaleb(d.adjusted() - (digits + more - 1))
        value = (d / step).to_integral_value(rounding=ROUND_CEILING) * step
        if value < 100:
            break
    return f"{min(value, Decimal(100)).normalize():f}%"


def significant_up(x: float, digits: int = 6) -> str:
    """``x`` with ``digits`` significant digits, rounded *up* (``inf`` as ``"inf"``): how a human
    table prints an upper bound -- never below the float it stands for (issue 34)."""
    from decimal import ROUND_CEILING, Decimal
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    d = Decimal(repr(x))
    step = Decimal(1).scaleb(d.adjusted() - (digits - 1))
    value = (d / step).to_integral_value(rounding=ROUND_CEILING) * step
    return f"{float(value):.{digits}g}"


def attack_words(readout: AttackReadout, *, fpr: float = 0.05, subject: str = "a record's value",
                 value: str = "A", other: str = "B", verb: str = "was", qualifier: str = "") -> str:
    """The attack readout in plain words (docs/attacks.md), e.g. "an attacker who knows
    everything else and wants to tell whether this household's peak hour was 18 or 7, and
    may be wrong at most 5% of the time when it was 7, is right at most 9.3% of the time when
    it was 18". Percentages are rounded up; ``fpr`` must be one of the readout's FPRs;
    ``qualifier`` follows the two values (e.g. ", for any two values A and B")."""
    tpr = readout.tpr(fpr)
    pronoun = "they" if verb == "were" else "it"
    text = (f"an attacker who knows everything else and wants to tell whether {subject} {verb} {value} or {other}"
            f"{qualifier}, and may be wrong at most {percent_up(fpr, 3)} of the time when {pronoun} {verb} {other}, is right at "
            f"most {percent_up(tpr, 3)} of the time when {pronoun} {verb} {value} (guessing: {percent_up(fpr, 3)})")
    if readout.prior_odds == 1:
        text += f"; starting from even odds, no release makes {value} more than {percent_up(readout.posterior, 3)} likely"
    return text


# ------------------------------------------------------------------ reference curves
def gdp_tradeoff(mu: float, alphas: np.ndarray) -> np.ndarray:
    """``G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)`` (DRS Def. 2.7)."""
    from scipy.special import ndtr, ndtri
    a = np.asarray(alphas, float)
    with np.errstate(divide="ignore"):
        return ndtr(ndtri(1.0 - a) - mu)


def dp_tradeoff(epsilon: float, delta: float, alphas: np.ndarray) -> np.ndarray:
    """``f_{eps, delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``
    (DRS eq. (5)): the curve (eps, delta)-DP guarantees."""
    a = np.asarray(alphas, float)
    e = math.exp(epsilon)
    return np.maximum(0.0, np.maximum(1.0 - delta - e * a, (1.0 - delta - a) / e))


def gdp_delta(mu: float, epsilon: float) -> float:
    """The ``delta(eps)`` of mu-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (DRS Cor. 2.13)."""
    from scipy.special import ndtr
    return float(ndtr(-epsilon / mu + mu / 2) - math.exp(epsilon) * ndtr(-epsilon / mu - mu / 2))


def pure_epsilon_for_mu(mu: float) -> float:
    """The largest pure ``eps`` whose curve ``f_{eps,0}`` lies above ``G_mu``.

    ``f_{eps,0}`` has one inner vertex, ``(1 / (1 + e^eps), e^eps / (1 + e^eps))``, so by the
    vertex rule it is above ``G_mu`` iff ``2 Phi^-1(e^eps / (1 + e^eps)) <= mu``, i.e.
    ``eps <= ln(Phi(mu/2) / Phi(-mu/2))``. Rounded *down* (computed at 300 bits, less a margin).
    """
    from mpmath import MPContext
    ctx = MPContext()
    ctx.prec = PROBIT_BITS
    m = ctx.mpf(float(mu)) / 2
    value = ctx.log(ctx.ncdf(m)) - ctx.log(ctx.ncdf(-m)) - ctx.mpf(10) ** -60
    out = float(value)
    return math.nextafter(out, -math.inf) if out > 0 else 0.0


__all__ = ["AttackReadout", "DEFAULT_FPRS", "EXP_UP", "PROBIT_BITS", "PROBIT_MARGIN", "attack_words", "check_fpr",
           "dp_tradeoff", "gdp_delta", "gdp_tradeoff", "parse_odds", "percent_up", "probit", "profile_readout",
           "pure_epsilon_for_mu", "significant_up"]
