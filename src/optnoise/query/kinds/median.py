"""``median``: the quantile of level 0.5 (:mod:`.quantile`, whose rules it shares; no
``quantiles`` key)."""

from .quantile import Median

KIND = Median()
