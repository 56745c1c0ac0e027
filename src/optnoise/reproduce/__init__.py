"""Regenerate the tables and figures of the four papers (``optnoise reproduce``).

One module per paper; each function is registered under an id such as ``kadam-table1``
and writes a CSV of its numbers and a PNG into the output directory. The verdicts
(reproduced, reproduced under a stated convention, not reproduced and why) are in
docs/reproduction.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from . import geng, holohan, kadam, qin  # noqa: F401,I001  (registration, in paper order)
from .common import REGISTRY, Item


def items() -> list[Item]:
    """All registered items, in paper order."""
    return list(REGISTRY.values())


def run(item_id: str, out_dir: Path) -> dict[str, Any]:
    """Run one item into ``out_dir`` (created if needed); returns its summary."""
    it = REGISTRY.get(item_id)
    if it is None:
        raise InvalidParameterError("ID", item_id, "one of " + ", ".join(REGISTRY))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = it.run(out_dir)
    return {"id": it.id, "paper": it.paper, "what": it.what, **summary}


__all__ = ["Item", "REGISTRY", "geng", "holohan", "items", "kadam", "qin", "run"]
