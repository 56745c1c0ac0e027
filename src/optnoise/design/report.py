"""What every design result shares: its mechanism's float analysis and exact certificate."""

from __future__ import annotations

from functools import cached_property

from ..analysis import Guarantee, guarantee
from ..mechanism import Mechanism


class DesignResult:
    """Mixin for design results that hold a ``mechanism`` (with a target).

    ``analysis`` is the tight *float* analysis of the designed masses at the target;
    :meth:`certify` is the *exact* certificate of the quantized weights that are sampled.
    The two are named apart so that nobody takes one for the other.
    """

    mechanism: Mechanism

    @cached_property
    def analysis(self) -> Guarantee:
        """Float analysis of the designed masses at the target's epsilon (and delta)."""
        t = self.mechanism.target
        if t is None:
            return guarantee(self.mechanism.privacy)
        return guarantee(self.mechanism.privacy, t.epsilon, None if t.pure else t.delta)

    def certify(self) -> Guarantee:
        """Exact certificate of the quantized weights that are sampled (rational, outward rounded)."""
        return self.mechanism.quantize().certificate
