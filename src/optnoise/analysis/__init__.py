"""Privacy analysis of any mechanism: pairs, float profile, exact certificate, composition.

* :mod:`~optnoise.analysis.pairs` -- the one builder of ordered neighbouring pairs;
* :mod:`~optnoise.analysis.floating` -- one pair in floating point (loss distribution,
  delta_DP, delta_PDP, inverses);
* :mod:`~optnoise.analysis.exact` -- one pair in rational arithmetic, outward rounded (the
  oracle);
* :mod:`~optnoise.analysis.exact_fast` -- the same certificates for integer weights,
  vectorised;
* :mod:`~optnoise.analysis.streaming` -- the float maxima of a large cyclic PMF, streamed;
* :mod:`~optnoise.analysis.profile` -- the maxima over pairs, :class:`PrivacyProfile`,
  ``meets``, :class:`Guarantee`;
* :mod:`~optnoise.analysis.renyi` -- Rényi DP curves, zCDP and the RDP -> (eps, delta) conversion;
* :mod:`~optnoise.analysis.composition` -- the guarantee after ``k`` releases (best of several bounds:
  :mod:`~optnoise.analysis.composition_bounds`; the exact sum over few loss atoms,
  :mod:`~optnoise.analysis.exact_composition`; the dominating pairs' PLDs,
  :mod:`~optnoise.analysis.dominating`, composed with numpy's FFT, :mod:`~optnoise.analysis.dense_pld`);
* :mod:`~optnoise.analysis.tradeoff` -- the exact trade-off curve of the best attacker (its readouts
  and words: :mod:`~optnoise.analysis.readout`; after ``k`` releases:
  :mod:`~optnoise.analysis.tradeoff_composition`);
* :mod:`~optnoise.analysis.sufficient` -- Holohan et al.'s sufficient sets;
* :mod:`~optnoise.analysis.intervals` -- exact confidence intervals of a released value (Neyman
  on a channel, noise quantiles for additive noise);
* :mod:`~optnoise.analysis.abs_error` -- the released value's expected absolute error.
"""

from .floating import RATIO_TOLERANCE, FloatPair, LossDistribution, PairAnalysis, PairMaxima
from .pairs import (IntegerForm, PairMasses, fraction_array, integer_form, integer_masses, neighbouring_pairs,
                    pair_builders)
from .profile import (Guarantee, LazyPair, PrivacyProfile, exact_profile, guarantee, pairs_from_arrays,
                      privacy_profile)
from .sufficient import SubsetChecks, subset_check_counts, sufficient_set

__all__ = [
    "FloatPair", "Guarantee", "IntegerForm", "LazyPair", "LossDistribution", "PairAnalysis", "PairMasses",
    "PairMaxima", "PrivacyProfile", "RATIO_TOLERANCE", "SubsetChecks", "exact_profile", "fraction_array",
    "guarantee", "integer_form", "integer_masses", "neighbouring_pairs", "pair_builders", "pairs_from_arrays",
    "privacy_profile", "subset_check_counts", "sufficient_set",
]
