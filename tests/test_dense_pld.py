"""Privacy loss distributions composed with numpy (optnoise.analysis.dense_pld), the path of
:func:`optnoise.analysis.composition.delta_curve` (and so of a query's ``total.attack``).

Oracles: masses worked out by hand; the exact composed hockey-stick by enumerating every
output tuple of the product in exact rationals; dp_accounting's composition of the same
Connect-the-Dots units (the path beyond the cell cap, forced with ``dense_cells=0``)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from optnoise.analysis import privacy_profile
from optnoise.analysis.composition import delta_curve
from optnoise.analysis.dense_pld import compose, delta_upper, from_grid, self_compose
from optnoise.neighbourhood import Neighbourhood
from optnoise.pmf import CyclicPMF
from optnoise.query.files import WARM_MODULES, warm_modules
from optnoise.query.spec import parse_query_spec


# ------------------------------------------------------------------ by hand
def test_two_atoms_composed_by_hand():
    """Losses -1/2 and +1/2 (grid 1/2, indices -1 and 1) with masses 1/4 and 3/4: twice gives
    losses -1, 0, 1 with masses 1/16, 6/16, 9/16, so delta(0) = 9/16 (1 - e^-1); a mass 0.1 at
    +inf composed with a mass 0.2 at +inf leaves 0.72 finite: 0.28 at +inf."""
    two = self_compose(from_grid(np.array([-1, 1]), np.array([0.25, 0.75]), 0.0, 0.0, 0.5), 2)
    assert two.low == -2 and two.cells == 5
    np.testing.assert_allclose(two.masses, [1 / 16, 0, 6 / 16, 0, 9 / 16], atol=1e-15)
    d0 = delta_upper(two, np.array([0.0]))[0]
    assert 9 / 16 * (1 - math.exp(-1)) <= d0 <= 9 / 16 * (1 - math.exp(-1)) + 1e-12
    a = from_grid(np.array([0]), np.array([0.9]), 0.1, 0.0, 0.5)
    b = from_grid(np.array([0]), np.array([0.8]), 0.2, 0.0, 0.5)
    ab = compose(a, b)
    assert ab.infinity == pytest.approx(0.28, abs=1e-15) and ab.masses[0] == pytest.approx(0.72, abs=1e-15)
    assert delta_upper(ab, np.array([5.0]))[0] >= 0.28          # the +inf mass counts at every epsilon
    assert ab.error > 0 and two.error > 0                       # the FFTs' error is carried


# ------------------------------------------------------------------ against exact enumeration
def _exact_delta(pairs_with_counts, eps: float) -> Fraction:
    """The hockey-stick of the product of the pairs (each ``(p, q)`` released ``k`` times), over
    every output tuple, in exact rationals, at ``E >= e^eps`` (so never above the truth)."""
    big_e = Fraction(math.exp(eps)) * (1 + Fraction(1, 2 ** 50))
    factors = [(tuple(map(Fraction, p)), tuple(map(Fraction, q))) for (p, q), k in pairs_with_counts
               for _ in range(k)]
    total = Fraction(0)
    for outs in itertools.product(*[range(len(p)) for p, _ in factors]):
        pp, qq = Fraction(1), Fraction(1)
        for (p, q), y in zip(factors, outs):
            pp *= p[y]
            qq *= q[y]
        total += max(Fraction(0), pp - big_e * qq)
    return total


F = np.array([0.5, 0.3, 0.2])
G = np.array([0.55, 0.25, 0.2, 0.0])      # a zero: an infinite loss on one side


def _pairs(f, shifts):
    return [(f, np.roll(f, -s)) for s in shifts]


@pytest.mark.parametrize("counts", [(2, 1), (1, 2)])
def test_delta_curve_never_below_the_exact_product(counts):
    """Two mechanisms, two directed pairs each (shifts 1 and 2), each as one dominating pair:
    the numpy path's delta is at least the exact delta of every combination of pairs."""
    nb = Neighbourhood((1, 2), directed=True)
    items = [(privacy_profile(CyclicPMF(F), nb), counts[0]), (privacy_profile(CyclicPMF(G), nb), counts[1])]
    eps = np.array([0.0, 0.4, 1.0, 2.5])
    _, got = delta_curve(items, eps, orders=(), max_combinations=1)
    for e, d in zip(eps, got):
        truth = max(_exact_delta([(a, counts[0]), (b, counts[1])], float(e))
                    for a in _pairs(F, (1, 2)) for b in _pairs(G, (1, 2)))
        assert d >= truth
        assert d <= 1.0


def test_one_pair_is_tight():
    """One pair composed three times: the bound exceeds the exact value by the grid's rounding
    only (losses moved up by at most 1e-4 each)."""
    nb = Neighbourhood((1,), directed=True)
    items = [(privacy_profile(CyclicPMF(F), nb), 3)]
    eps = np.array([0.2, 0.8])
    _, got = delta_curve(items, eps, orders=())
    for e, d in zip(eps, got):
        truth = _exact_delta([((F, np.roll(F, -1)), 3)], float(e))
        assert truth <= d <= truth + 1e-3


def test_numpy_and_dp_accounting_paths_agree():
    """The same Connect-the-Dots units composed by numpy and (forced) by dp_accounting: two
    upper bounds of the same dominating PLD, equal up to their allowances and dp_accounting's
    tail truncation."""
    nb = Neighbourhood((1, 2), directed=True)
    items = [(privacy_profile(CyclicPMF(F), nb), 3), (privacy_profile(CyclicPMF(G), nb), 2)]
    eps = np.linspace(0.0, 3.0, 7)
    _, dense = delta_curve(items, eps, orders=(), max_combinations=1)
    _, pld = delta_curve(items, eps, orders=(), max_combinations=1, dense_cells=0)
    np.testing.assert_allclose(dense, pld, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ the query path
def _spec(**stat):
    return parse_query_spec({"unit": {"id": "u", "max_rows": 2},
                             "statistics": {"n": {"kind": "count", **stat}}})


def test_warm_modules_from_the_spec():
    assert warm_modules(_spec(epsilon=1.0)) == ()
    assert warm_modules(_spec(epsilon=1.0, delta=1e-6)) == WARM_MODULES
    assert warm_modules(_spec(epsilon=1.0, delta=1e-6, mechanism="clamped-discrete-gaussian")) == WARM_MODULES


def test_a_pure_query_does_not_import_dp_accounting(tmp_path):
    """A pure spec's document from a file (the command line's path, background imports
    included), total and attack readout included, without dp_accounting."""
    (tmp_path / "t.csv").write_text("u,k\n1,0\n1,1\n2,1\n3,0\n")
    code = ("import sys\n"
            "from optnoise.query.files import query_file\n"
            "doc = query_file(sys.argv[1], {'unit': {'id': 'u', 'max_rows': 2}, 'statistics': {\n"
            "    'h': {'kind': 'histogram', 'key': 'k', 'keys': [0, 1], 'epsilon': 1.0},\n"
            "    'n': {'kind': 'count', 'epsilon': 0.5}}})\n"
            "assert doc['total']['attack']['tpr_at_fpr']['0.05'] < 1\n"
            "print(sorted(m for m in sys.modules if m.startswith('dp_accounting')))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t.csv")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ the sparse self-composition
def test_few_losses_compose_by_sparse_convolution(monkeypatch):
    """A unit with few nonzero cells (the geometric at distance 1: three grid points) is
    self-composed by sparse convolutions: the same masses as the FFT's within both errors, a
    smaller error, and delta never below the exact product's (enumerated in rationals)."""
    from optnoise.analysis import dense_pld
    unit = from_grid(np.array([-7, 0, 7]), np.array([0.2, 0.3, 0.5]), 0.0, 1e-15, 0.1)
    sparse = self_compose(unit, 12)
    monkeypatch.setattr(dense_pld, "SPARSE_WORK", 0)            # the FFT path
    fft = self_compose(unit, 12)
    assert sparse.cells == fft.cells and sparse.low == fft.low
    assert np.abs(sparse.masses - fft.masses).sum() <= sparse.error + fft.error
    assert sparse.error < fft.error
    assert np.count_nonzero(sparse.masses) == 25                # losses -84..84 in steps of 7 cells
    exact = [Fraction(0)] * 25
    for a in range(13):                                        # a at -0.7, c at +0.7, the rest at 0
        for c in range(13 - a):
            coef = math.comb(12, a) * math.comb(12 - a, c)
            exact[c - a + 12] += coef * Fraction(0.2) ** a * Fraction(0.5) ** c * Fraction(0.3) ** (12 - a - c)
    for eps in (0.0, 1.0, 4.0):
        truth = sum(m * (1 - Fraction(math.exp(eps)) * Fraction(math.exp(-0.7 * (j - 12))))
                    for j, m in enumerate(exact) if 0.7 * (j - 12) > eps + 1e-12)
        assert delta_upper(sparse, np.array([eps]))[0] >= truth
