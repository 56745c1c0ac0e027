"""Small helpers shared by several commands."""

from pathlib import Path
from typing import Optional

from ...errors import InvalidParameterError
from ...mechanism import Mechanism


def check_png(plot: Optional[Path]) -> None:
    """``--plot`` must name a PNG file."""
    if plot is not None and plot.suffix.lower() != ".png":
        raise InvalidParameterError("--plot", str(plot), "a path ending in .png")


def save_mechanism(mechanism: Mechanism, output: Path, report: Optional[dict] = None) -> str:
    """Write ``--output`` as a mechanism file (atomically); returns the path written."""
    mechanism.save(output, report=report)
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
