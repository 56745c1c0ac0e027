"""Exact certificates: rational arithmetic with outward rounding.

The masses are :class:`fractions.Fraction`; the only irrational quantities are
``e^eps`` and the logarithms that turn a likelihood ratio into an epsilon. Those
are enclosed in intervals (``mpmath.libmp.mpi_*`` at an explicit 256 bits) and every reported number is
rounded so that the certificate is never optimistic (docs/architecture.md, "Exactness"):

* ``delta(eps)`` uses the *lower* end of ``e^eps`` and rounds the rational result
  up to the next float;
* an epsilon ``ln r`` uses the *upper* end of the interval of ``ln r`` and rounds
  up to the next float.

Comparisons between ratios (which losses are larger, where a segment of the
hockey-stick curve starts) are exact comparisons of rationals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from .floating import LossDistribution

_PREC = 256


def _mpf_to_fraction(x: tuple) -> Fraction:
    """The exact rational value of a raw finite mpmath float ``(sign, man, exp, bc)``."""
    from mpmath import libmp
    if not libmp.mpf_eq(x, x) or x in (libmp.finf, libmp.fninf):
        raise ArithmeticError("interval bound is not finite")
    sign, man, exp, _ = x
    value = Fraction(int(man) << exp) if exp >= 0 else Fraction(int(man), 1 << -exp)
    return -value if sign else value


def float_up(x: Fraction) -> float:
    """Smallest float ``>= x``."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


#: ``exp_lower`` never returns more than ``2^EXP_CAP_BITS``. Every likelihood ratio an
#: analysis meets is far below it (float masses are >= 2^-1074 and exact decimals are
#: limited to 1000 digits, see :mod:`optnoise.io`), so above ``eps = EXP_CAP_BITS ln 2``
#: (about 5678) delta is the mass facing impossible outputs, found without building a
#: number of ``eps / ln 2`` bits (``eps = 1e30`` would need 1.4e30 bits).
EXP_CAP_BITS = 8192


def exp_lower(epsilon: float) -> Fraction:
    """A rational lower bound of ``e^epsilon`` within ``2^-250`` relative (exactly 1 at 0).

    ``mpmath.libmp.mpi_exp`` encloses ``exp`` of the exact binary value of the float at an
    explicit precision of :data:`_PREC` bits with outward rounding; the lower end is a
    binary rational. (``mpmath.workprec`` would not do: it sets the precision of the
    ordinary context, not of the interval context, which stays at 53 bits.)

    Why a capped value is still never optimistic: every use of ``E = exp_lower(eps)``
    needs only ``E <= e^eps`` -- a smaller ``E`` enlarges each excess ``p - E p'`` and the
    set of ratios above ``E`` (delta_DP, delta_PDP) and tightens the ratio constraints a
    quantized mechanism must keep (:mod:`optnoise.sampling`). So for huge ``eps`` the
    bound ``2^EXP_CAP_BITS <= e^eps`` is used; it is tight whenever every ratio is below it.

    Proof: docs/proofs/outward-rounding.md.
    """
    if epsilon == 0:
        return Fraction(1)
    if epsilon >= EXP_CAP_BITS * math.log(2) + 1:  # then e^eps > 2^EXP_CAP_BITS with room to spare
        return Fraction(2 ** EXP_CAP_BITS)
    from mpmath import libmp
    x = libmp.from_float(float(epsilon))  # a float is an exact binary rational
    return _mpf_to_fraction(libmp.mpi_exp((x, x), _PREC)[0])


def exp_upper(epsilon: float) -> Fraction:
    """A rational upper bound of ``e^epsilon`` within ``2^-250`` relative (exactly 1 at 0),
    for ``epsilon`` below :data:`EXP_CAP_BITS` ``ln 2`` (the upper end of the same enclosure as
    :func:`exp_lower`). A ratio ``r >= exp_upper(eps)`` proves ``ln r >= eps`` exactly.

    Proof: docs/proofs/outward-rounding.md.
    """
    if epsilon == 0:
        return Fraction(1)
    if epsilon >= EXP_CAP_BITS * math.log(2):
        raise ValueError(f"exp_upper({epsilon!r}): beyond 2^{EXP_CAP_BITS}")
    from mpmath import libmp
    x = libmp.from_float(float(epsilon))
    return _mpf_to_fraction(libmp.mpi_exp((x, x), _PREC)[1])


def log_up(r: Fraction) -> float:
    """The smallest float ``>= ln r`` for a rational ``r > 0``.

    The interval of ``ln r`` at :data:`_PREC` bits (outward rounded, explicit precision) is
    far narrower than a float's ulp; its upper end is rounded up by :func:`float_up`.

    Proof: docs/proofs/outward-rounding.md.
    """
    if r == 1:
        return 0.0
    from mpmath import libmp
    num, den = libmp.from_int(r.numerator), libmp.from_int(r.denominator)
    ratio = libmp.mpi_div((num, num), (den, den), _PREC)
    return float_up(_mpf_to_fraction(libmp.mpi_log(ratio, _PREC)[1]))


@dataclass(frozen=True, eq=False)
class ExactPair:
    """One ordered pair ``(p, p')`` with rational masses.

    Why the values are never optimistic: every mass is an exact rational, every sum and
    comparison of ratios is exact, ``e^eps`` enters only through :func:`exp_lower` (a
    rational *below* ``e^eps``, which can only enlarge the violating set and each excess
    ``p - E p'``) and every logarithm through :func:`log_up` (rounded up); each result is
    rounded up to the next float by :func:`float_up`.
    """

    p: tuple[Fraction, ...]
    q: tuple[Fraction, ...]
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", tuple(self.p))
        object.__setattr__(self, "q", tuple(self.q))

    @cached_property
    def _groups(self) -> tuple[Fraction, list[tuple[Fraction, Fraction, Fraction]]]:
        """Infinite-loss mass and ``(ratio, P, Q)`` groups sorted by decreasing ratio."""
        inf_mass = Fraction(0)
        groups: dict[Fraction, list[Fraction]] = {}
        for pi, qi in zip(self.p, self.q):
            if pi == 0:
                continue
            if qi == 0:
                inf_mass += pi
                continue
            g = groups.setdefault(pi / qi, [Fraction(0), Fraction(0)])
            g[0] += pi
            g[1] += qi
        ordered = [(r, pq[0], pq[1]) for r, pq in sorted(groups.items(), key=lambda t: t[0], reverse=True)]
        return inf_mass, ordered

    @cached_property
    def epsilon_pure(self) -> float:
        inf_mass, groups = self._groups
        if inf_mass > 0:
            return math.inf
        if not groups:
            return 0.0
        top = groups[0][0]
        return log_up(top) if top > 1 else 0.0

    def delta_dp_exact(self, e_low: Fraction) -> Fraction:
        """``sum max(0, p - E q)`` for a rational ``E`` (an upper bound when ``E <= e^eps``)."""
        inf_mass, groups = self._groups
        total = inf_mass
        for r, pm, qm in groups:
            if r <= e_low:
                break
            total += pm - e_low * qm
        return total

    def delta_dp(self, epsilon: float) -> float:
        return float_up(self.delta_dp_exact(exp_lower(epsilon)))

    def delta_pdp(self, epsilon: float) -> float:
        inf_mass, groups = self._groups
        e_low = exp_lower(epsilon)
        total = inf_mass + sum((pm for r, pm, _ in groups if r > e_low), Fraction(0))
        return float_up(total)

    def epsilon_dp(self, delta: float) -> float:
        d = Fraction(delta)
        inf_mass, groups = self._groups
        if inf_mass > d:
            return math.inf
        a, b = inf_mass, Fraction(0)
        # walk segments [r_j, r_{j-1}) in the E = e^eps scale, E >= 1
        for r, pm, qm in groups:
            if r <= 1:
                break
            if a - r * b > d:  # g(r_j) > delta: the answer lies above r_j
                return log_up(max((a - d) / b, r))
            a += pm
            b += qm
        if a - b <= d:  # g(E = 1), i.e. eps = 0
            return 0.0
        return log_up(max((a - d) / b, Fraction(1)))

    def epsilon_pdp(self, delta: float) -> float:
        d = Fraction(delta)
        inf_mass, groups = self._groups
        if inf_mass > d:
            return math.inf
        a = inf_mass
        best: Fraction | None = None
        for r, pm, _ in groups:
            if r <= 1:
                break
            if a <= d:
                best = r
            else:
                break
            a += pm
        if a <= d:
            return 0.0
        return log_up(best) if best is not None else math.inf

    def loss_distribution(self) -> LossDistribution:
        inf_mass, groups = self._groups
        return LossDistribution(
            np.array([math.log(r) for r, _, _ in groups]),
            np.array([float(pm) for _, pm, _ in groups]),
            np.array([float(qm) for _, _, qm in groups]),
            float(inf_mass))
