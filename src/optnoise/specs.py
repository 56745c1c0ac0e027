"""One parser for ``NAME:PARAMS`` specification strings.

Families (``geometric:0.5``), costs (``pow:3``) and Wasserstein inputs
(``gaussian:0,10``, ``pmf-file:PATH``) are all written ``NAME[:P1,P2,...]``.

>>> parse_spec("discrete-gaussian:1.5, 2")
Spec(name='discrete-gaussian', params=('1.5', '2'), text='discrete-gaussian:1.5, 2')
>>> parse_spec("pmf-file:a,b.json", split=False).params
('a,b.json',)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import InvalidParameterError


@dataclass(frozen=True)
class Spec:
    """A parsed ``NAME:PARAMS`` string; ``text`` is the original, for messages."""

    name: str
    params: tuple[str, ...]
    text: str

    def count(self, low: int, high: int, *, parameter: str, accepted: str) -> None:
        """Require ``low <= len(params) <= high``."""
        if not low <= len(self.params) <= high:
            raise InvalidParameterError(parameter, self.text, accepted)

    def number(self, index: int, *, parameter: str, accepted: str, default: float | None = None) -> float:
        """Parameter ``index`` as a finite float (``default`` when absent)."""
        if index >= len(self.params):
            if default is None:
                raise InvalidParameterError(parameter, self.text, accepted)
            return default
        try:
            value = float(self.params[index])
        except ValueError:
            raise InvalidParameterError(parameter, self.text, accepted) from None
        if not math.isfinite(value):
            raise InvalidParameterError(parameter, self.text, accepted)
        return value

    def integer(self, index: int, *, parameter: str, accepted: str) -> int:
        """Parameter ``index`` as an integer (``"3"``; ``"3.0"`` is refused)."""
        if index >= len(self.params):
            raise InvalidParameterError(parameter, self.text, accepted)
        try:
            return int(self.params[index])
        except ValueError:
            raise InvalidParameterError(parameter, self.text, accepted) from None


def parse_spec(text: str, *, parameter: str = "spec", split: bool = True) -> Spec:
    """Split ``NAME[:P1,P2,...]``; ``split=False`` keeps everything after the colon as one
    parameter (for paths, which may contain commas)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(parameter, text, "NAME or NAME:PARAMS")
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    if not name:
        raise InvalidParameterError(parameter, text, "NAME or NAME:PARAMS")
    if not rest.strip():
        params: tuple[str, ...] = ()
    elif split:
        params = tuple(p.strip() for p in rest.split(","))
    else:
        params = (rest.strip(),)
    return Spec(name, params, text)
