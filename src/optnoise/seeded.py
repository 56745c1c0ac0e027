"""Seeded means not private, everywhere: the one wording, the one warning, the one key.

A seeded generator (:class:`~optnoise.randomness.SeededRandomSource`) makes a release
reproducible and removes its protection: anyone who knows or guesses the seed can draw the
same noise and subtract it. So an output made with one

* says :data:`NOT_PRIVATE` wherever an unseeded output states a protection;
* keeps its certificates and totals only under :data:`UNSEEDED_KEY` (they describe the
  mechanism, and hold only for draws from an unpredictable source) -- :func:`withhold`;
* warns in Python (:class:`NotPrivateWarning`, :func:`warn_not_private`).

Used by ``Mechanism.sample``/``apply``, ``release`` and its manifest, the command line, and
by any new output that states a guarantee (the statistics engine's manifest).
"""

from __future__ import annotations

import copy
import warnings
from typing import Iterable, Protocol

#: The sentence a seeded output says instead of any protection.
NOT_PRIVATE = "not private: anyone who knows or guesses the seed can remove the noise"
#: The key under which a seeded output keeps its certificates and totals.
UNSEEDED_KEY = "only_if_unseeded"
#: What :data:`UNSEEDED_KEY` means, stored beside what it holds.
UNSEEDED_NOTE = ("these certificates and totals describe the mechanisms and hold only for draws from an "
                 "unpredictable source; this output was seeded, so they do not hold for it (" + NOT_PRIVATE + ")")


class _Source(Protocol):
    private: bool

    @property
    def description(self) -> str: ...


class NotPrivateWarning(UserWarning):
    """Randomness from a seeded (predictable) generator: the output is not private."""


def warn_not_private(source: _Source, what: str, *, stacklevel: int = 3) -> None:
    """``warnings.warn`` a :class:`NotPrivateWarning` when ``source`` is not private
    (``what``: the output, e.g. ``"Mechanism.sample"``); nothing otherwise."""
    if not bool(getattr(source, "private", True)):
        warnings.warn(f"{what}: {NOT_PRIVATE} (randomness: {source.description})", NotPrivateWarning,
                      stacklevel=stacklevel)


def withhold(payload: dict, paths: Iterable[tuple[str, ...]], *, replace: Iterable[tuple[str, ...]] = ()) -> dict:
    """A copy of ``payload`` with the values at ``paths`` moved under :data:`UNSEEDED_KEY`
    (at the same paths there, with :data:`UNSEEDED_NOTE`), and the text at ``replace``
    (sentences of protection) moved there too and replaced by :data:`NOT_PRIVATE`.
    A path that is absent is skipped."""
    out = copy.deepcopy(payload)
    held: dict = {"note": UNSEEDED_NOTE}
    for path, words in [(p, False) for p in paths] + [(p, True) for p in replace]:
        parent = out
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
            if parent is None:
                break
        if not isinstance(parent, dict) or path[-1] not in parent:
            continue
        slot = held
        for key in path[:-1]:
            slot = slot.setdefault(key, {})
        slot[path[-1]] = parent[path[-1]]
        if words:
            parent[path[-1]] = NOT_PRIVATE
        else:
            del parent[path[-1]]
    out[UNSEEDED_KEY] = held
    return out


__all__ = ["NOT_PRIVATE", "NotPrivateWarning", "UNSEEDED_KEY", "UNSEEDED_NOTE", "warn_not_private", "withhold"]
