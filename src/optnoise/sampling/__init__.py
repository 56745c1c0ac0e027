"""Quantize-and-certify, and exact sampling with injected randomness.

* :mod:`~optnoise.sampling.quantize` -- integer weights for a mechanism and the exact
  certificate of *those* weights (:func:`quantize`);
* :mod:`~optnoise.sampling.quantized` -- the quantized forms (cyclic noise, channel rows, noise on
  Z with dyadic tails): what is sampled, its certificate and its exact draw;
* :mod:`~optnoise.sampling.alias` -- exact integer alias tables (Walker/Vose), one word per
  draw (docs/alias.md);
* :mod:`~optnoise.sampling.words` -- uniform integers, dyadic geometrics and inverse-CDF
  draws from 64-bit random words;
* :mod:`~optnoise.sampling.integer_line` -- exact vectorised samplers on Z: a window with
  dyadic geometric tails (what quantized integer-line mechanisms are), and the named laws
  (discrete Laplace, discrete Gaussian, Geng & Viswanath's discrete staircase) for rational
  parameters, by exact inversion (:mod:`~optnoise.sampling.inversion`) or vectorised
  rejection (Canonne, Kamath & Steinke 2020, Algorithms 1-3);
* :mod:`~optnoise.sampling.noisy_max` -- report-noisy-max over integer scores (permute-and-flip,
  the exponential mechanism), drawn exactly, with its exact law and its guarantee by theorem.

What a :class:`~optnoise.mechanism.Mechanism` samples is always its quantized form, i.e.
exactly the law in its certificate (docs/release.md). The named-law samplers are exact
library functions without a certificate of their own.
"""

from .alias import ALIAS_MIN_SUPPORT, AliasTable
from .integer_line import (Tail, WindowTailsTable, bernoulli_exp, bernoulli_rational, discrete_gaussian,
                           discrete_laplace, discrete_staircase, draw_window_tails, two_sided_geometric,
                           window_tails_table)
from .quantize import (MAX_BITS, QUANTIZE_SCHEDULE, TAIL_BITS, WINDOW_BITS, Quantized, QuantizedChannel,
                       QuantizedCyclic, QuantizedInteger, dyadic_ratio_up, exact_integer_pmf, integer_line_form,
                       quantize, round_weights)
from .words import draw_indices, geometric_failures, uniform_below

#: Geng & Viswanath's discrete staircase (the name used before the vectorised samplers).
sample_discrete_staircase = discrete_staircase

__all__ = [
    "ALIAS_MIN_SUPPORT", "AliasTable", "MAX_BITS", "QUANTIZE_SCHEDULE", "Quantized", "QuantizedChannel",
    "QuantizedCyclic", "QuantizedInteger", "TAIL_BITS", "Tail", "WINDOW_BITS", "WindowTailsTable", "bernoulli_exp",
    "bernoulli_rational", "discrete_gaussian", "discrete_laplace", "discrete_staircase", "draw_indices",
    "draw_window_tails", "dyadic_ratio_up", "exact_integer_pmf", "geometric_failures", "integer_line_form",
    "quantize", "round_weights", "sample_discrete_staircase", "two_sided_geometric", "uniform_below",
    "window_tails_table",
]
