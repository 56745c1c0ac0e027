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
from ..io import check_outputs_in
from . import geng, holohan, kadam, qin  # noqa: F401,I001  (registration, in paper order)
from .common import REGISTRY, Item


def items() -> list[Item]:
    """All registered items, in paper order."""
    return list(REGISTRY.values())


def check_items(item_ids: list[str], out_dir: Path, *, force: bool = False) -> Path:
    """The items exist, and the output rule (:func:`optnoise.io.check_outputs_in`) for their
    files in ``out_dir``: none is replaced unless ``force``; other files are left alone."""
    for item_id in item_ids:
        if item_id not in REGISTRY:
            raise InvalidParameterError("ID", item_id, "one of " + ", ".join(REGISTRY))
    return check_outputs_in(out_dir, [f for i in item_ids for f in REGISTRY[i].files], force=force)


def run(item_id: str, out_dir: Path, *, force: bool = False) -> dict[str, Any]:
    """Run one item into ``out_dir`` (created if needed); returns its summary. Its files
    (``ID.csv``, ``ID.png``) replace existing ones only with ``force``."""
    out_dir = check_items([item_id], out_dir, force=force)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError("out", str(out_dir), f"a directory this user can create ({exc.strerror})") from None
    it = REGISTRY[item_id]
    summary = it.run(out_dir)
    return {"id": it.id, "paper": it.paper, "what": it.what, **summary}


__all__ = ["Item", "REGISTRY", "check_items", "geng", "holohan", "items", "kadam", "qin", "run"]
