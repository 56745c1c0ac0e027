"""A statistic's cells released by a mechanism from a file (issue 37, item 3).

``mechanism = { file = "PATH" }`` in a count, a histogram or a sum: each cell is released by the
mechanism of a file written by ``optnoise design`` (``--form channel``, per record or not, a
compact block-map channel included) or by ``save`` -- a publisher's own optimal channel for
another cost, a prior or a per-record target, at the statistic's real domain size. The file's
mechanism is used only after the query's own checks:

* **the domain**: a channel must have one row per answer ``0..n`` of the cell's domain (``n``:
  the public number of units under ``replace``, ``unit.max_units`` under ``add-remove``; a
  sum's scaled range) and release values in it; noise on the integer line is clamped to the
  domain, as the query's own cells are, and a file's remap of the clamped outputs (the geometric
  noise with a remap of ``design --form channel --sd 1`` above n = 2,000) must be on that domain:
  clamping and remapping are post-processing of the noise (docs/proofs/geometric-remap.md);
* **the certificate**: the mechanism is certified **again, exactly**, under the cell's derived
  distances ``1..d`` (``Neighbourhood.bd(d)``; a block-map channel under its complete graph,
  which holds every pair of answers) and must meet the cell's target -- the file's own target
  and neighbourhood are not trusted (:meth:`optnoise.mechanism.Mechanism.quantize`);
* **the record**: the cell's design names the file and the SHA-256 of the bytes read.

A relative path is read from the working directory (the Python API's and the command line's).
"""

from __future__ import annotations

from ..errors import InvalidParameterError, OptnoiseError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, IntegerPMF
from ..target import Target
from .mechanisms import Cell


def file_cell(name: str, path: str, n: int, offset: int, distance: int, target: Target) -> Cell:
    """The cell on ``offset + {0..n}`` released by the mechanism in ``path``, re-certified under
    the distances ``1..distance`` at ``target`` (module docstring).

    Raises
    ------
    InvalidParameterError
        ``mechanism``: the file is unreadable, of another domain or kind, or its exact
        certificate under the cell's distances misses the target (naming what it gives).
    """
    from ..mechanism.files import load_mechanism
    mech = load_mechanism(path, parameter="mechanism")
    origin = mech.origin
    if isinstance(mech.pmf, Channel):
        answers = mech.blocks.answers if mech.blocks is not None else mech.pmf.matrix.shape[0]
        outputs = len(mech.blocks.values) if mech.blocks is not None else mech.pmf.matrix.shape[1]
        if answers != n + 1 or (mech.blocks is None and outputs != n + 1):
            raise InvalidParameterError("mechanism", path, f"a channel on the cell's domain: {n + 1} answers "
                                        f"(0..{n}) and released values in it; the file has {answers} answers and "
                                        f"{outputs} outputs")
        nb = mech.neighbourhood if mech.blocks is not None else Neighbourhood.bd(distance)
        if mech.blocks is not None and not _every_pair(nb, mech.pmf.matrix.shape[0]):
            raise InvalidParameterError("mechanism", path, "a block-map channel certified per record (the complete "
                                        "graph on its core's rows)")
        space = "channel"
    elif isinstance(mech.pmf, IntegerPMF):
        if mech.release is not None and mech.release.n != n:
            raise InvalidParameterError("mechanism", path, f"noise released on the cell's domain 0..{n}; the file's "
                                        f"release is on 0..{mech.release.n}")
        nb, space = Neighbourhood.bd(distance), "clamped-line"
    else:
        raise InvalidParameterError("mechanism", path, "a channel on the cell's domain or noise on the integer line "
                                    "(cyclic noise wraps around: not a count's)")
    cell_mech = mech.replace(neighbourhood=nb, target=target, origin=None)   # its block map or release kept
    try:
        cert = cell_mech.quantize().certificate
    except OptnoiseError as exc:
        raise InvalidParameterError("mechanism", path, f"a mechanism meeting the cell's target {target.describe()} "
                                    f"under distances up to {distance} ({exc})") from exc
    sha = origin.sha256 if origin is not None else None
    return Cell(name, cell_mech, space, n, offset,
                f"the mechanism of {path} (sha256 {sha}), certified exactly again under the cell's distances",
                {"method": "file", "file": str(path), "sha256": sha, "epsilon_pure": cert.epsilon_pure})


def _every_pair(nb: Neighbourhood | InputPairs, rows: int) -> bool:
    """Whether ``nb`` holds every ordered pair of ``rows`` inputs (the complete graph, directed
    or not): then every pair of answers of a block-map channel is a neighbour pair."""
    if not isinstance(nb, InputPairs):
        return False
    have = {tuple(p) for p in nb.pairs} | (set() if nb.directed else {(b, a) for a, b in nb.pairs})
    return all((i, j) in have for i in range(rows) for j in range(rows) if i != j)


__all__ = ["file_cell"]
