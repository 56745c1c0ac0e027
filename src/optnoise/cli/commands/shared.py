"""Small helpers shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from ...errors import InvalidParameterError
from ..options import Writes
from ..render import echo_json, say

if TYPE_CHECKING:  # the mechanism (and numpy) load when a command uses them, not when it is registered
    from ...mechanism import Mechanism


def plots():
    """The plotting module, imported only when a figure is drawn (matplotlib is slow to import)."""
    from ... import plots as module
    return module


def check_png(plot: Optional[Path]) -> None:
    """``--plot`` must name a PNG file."""
    if plot is not None and plot.suffix.lower() != ".png":
        raise InvalidParameterError("--plot", str(plot), "a path ending in .png")


def save_mechanism(mechanism: Mechanism, output: Path, writes: Writes, report: Optional[dict] = None) -> str:
    """Write ``--output`` as a mechanism file (atomically, under the output rule); returns the path written."""
    mechanism.save(output, report=report, force=writes.force, reads=writes.reads)
    return str(output)


def parse_list(text: str, flag: str, accepted: str, convert=float) -> list:
    """Comma-separated values of a list option."""
    try:
        values = [convert(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise InvalidParameterError(flag, text, accepted) from exc
    if not values:
        raise InvalidParameterError(flag, text, accepted)
    return values


def deliver(payload: dict, *, as_json: bool, render: Callable[[dict], None],
            mechanism: Optional[Mechanism] = None, output: Optional[Path] = None, writes: Optional[Writes] = None,
            plot: Optional[Path] = None, draw: Optional[Callable[[Path], None]] = None,
            with_report: bool = True) -> None:
    """The common end of every command: draw ``--plot``, save ``--output`` (the mechanism, with
    the report keys unless ``with_report`` is false, under the output rule of ``writes``), then
    print one JSON object or the human view."""
    if plot is not None and draw is not None:
        draw(plot)
        payload["plot"] = str(plot)
    if output is not None and mechanism is not None:
        payload["output"] = save_mechanism(mechanism, output, writes or Writes(False, ()),
                                           report=payload if with_report else None)
    if as_json:
        echo_json(payload)
    else:
        render(payload)
        for line in wrote(payload):
            say((line, "dim"))


def wrote(payload: dict) -> list[str]:
    """What a command wrote, in words (after its human view): the mechanism file of
    ``--output`` and the figure of ``--plot``."""
    lines = []
    if payload.get("output"):
        lines.append(f"wrote {payload['output']}: the mechanism file (its PMF, neighbourhood, target and exact "
                     "certificate; optnoise sample, release and verify take it with --mechanism)")
    if payload.get("plot"):
        lines.append(f"wrote {payload['plot']}: the figure (PNG)")
    return lines
