"""``std``: the standard deviation over the table's units, the square root of a
:mod:`.variance` (the same parts, budget split and rules): never negative, never above
``(U - L) / 2``, never NaN; its interval the square roots of the variance's interval's ends
(a monotone map keeps the coverage)."""

from __future__ import annotations

from .variance import Variance


class Std(Variance):
    name = "std"
    order = 7
    root = True


KIND = Std()
