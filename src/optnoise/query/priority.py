"""The priorities of ``bounding = "random"``: a pseudorandom function of the rows' read index,
so that the local engine and the Spark engine keep the same rows for the same seed
(docs/proofs/contribution-bounding.md, item 7).

One 128-bit key ``k`` is drawn from the injected source once per query (:func:`draw_key`: the
CSPRNG, or a seeded stream, reproducible and labelled not private). A row's priority is the
first 8 bytes, read as a big-endian unsigned integer, of ``AES_k`` of its read index (the
row's number in the input, 1, 2, ..., as error messages name it) written as a 16-byte
big-endian block (:func:`row_priorities`); a unit's group (or cell) ``c`` has the priority of
the block whose first 8 bytes are ``2^63 + c`` and last 8 the read index of the unit's first
row (:func:`group_priorities`): the top bit separates the two domains, so no group block is a
row block, and distinct rows (or distinct (unit, group) pairs) are distinct blocks, hence --
AES being a permutation -- distinct ciphertexts (their 64-bit prefixes tie with probability
about ``n^2 / 2^65`` among ``n``). The whole batch is one AES-ECB call (OpenSSL through
``cryptography``), locally and on Spark's executors (a vectorised UDF, the priorities as signed
longs in the same order, :func:`signed`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..randomness import RandomSource

#: The key's bytes (AES-128).
KEY_BYTES = 16
#: The first half of a group block: this bit set (the group's code below it).
GROUP_TAG = 1 << 63


def draw_key(source: RandomSource) -> bytes:
    """A 128-bit key: two 64-bit words of ``source``, big-endian."""
    return np.asarray(source.words(2), np.uint64).astype(">u8").tobytes()


def encrypt_blocks(key: bytes, high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """The first 8 bytes (a big-endian ``uint64``) of ``AES_k`` of each 16-byte block
    ``high || low`` (two big-endian 64-bit halves), in one ECB call."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    blocks = np.empty((len(low), 2), ">u8")
    blocks[:, 0] = high
    blocks[:, 1] = low
    out = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(blocks.tobytes())
    return np.frombuffer(out, ">u8")[0::2].astype(np.uint64)


def row_priorities(key: bytes, index: np.ndarray) -> np.ndarray:
    """Each row's priority from its read index (module docstring).

    Proof: docs/proofs/contribution-bounding.md (item 7)
    """
    index = np.asarray(index, np.int64)
    return encrypt_blocks(key, np.zeros(len(index), np.uint64), index.astype(np.uint64))


def group_priorities(key: bytes, first: np.ndarray, code: np.ndarray) -> np.ndarray:
    """The priority of a unit's group (or cell) ``code``, the unit named by the read index of
    its first row ``first`` (module docstring).

    Proof: docs/proofs/contribution-bounding.md (item 7)
    """
    code = np.asarray(code, np.int64).astype(np.uint64)
    return encrypt_blocks(key, code | np.uint64(GROUP_TAG), np.asarray(first, np.int64).astype(np.uint64))


def signed(priority: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit priorities as int64 in the same order (the top bit flipped): Spark's
    longs are signed."""
    return (np.asarray(priority, np.uint64) ^ np.uint64(1 << 63)).view(np.int64)


def spark_row_priority(key: bytes, index: Any) -> Any:
    """:func:`row_priorities` of the read index column ``index`` as a Spark long column,
    :func:`signed` (ordered as the priorities): a vectorised UDF (Arrow batches, one AES call
    each) -- Spark SQL's ``aes_encrypt`` gives the same bytes but builds a cipher per row, ten
    times slower (docs/benchmarks.md, "Group rules on Spark")."""
    import pandas as pd
    from pyspark.sql import functions as F

    def rows(i: pd.Series) -> pd.Series:
        return pd.Series(signed(row_priorities(key, i.to_numpy(np.int64))))
    rows.__annotations__ = {"i": pd.Series, "return": pd.Series}   # types, not this module's texts
    return F.pandas_udf(rows, "long")(F.coalesce(index, F.lit(0).cast("long")))


def spark_group_priority(key: bytes, first: Any, code: Any) -> Any:
    """:func:`group_priorities` as a Spark long column, :func:`signed` (null inputs read as 0:
    the caller orders those rows apart)."""
    import pandas as pd
    from pyspark.sql import functions as F

    def groups(f: pd.Series, c: pd.Series) -> pd.Series:
        return pd.Series(signed(group_priorities(key, f.to_numpy(np.int64), c.to_numpy(np.int64))))
    groups.__annotations__ = {"f": pd.Series, "c": pd.Series, "return": pd.Series}
    zero = F.lit(0).cast("long")
    return F.pandas_udf(groups, "long")(F.coalesce(first.cast("long"), zero), F.coalesce(code.cast("long"), zero))


__all__ = ["GROUP_TAG", "KEY_BYTES", "draw_key", "encrypt_blocks", "group_priorities", "row_priorities", "signed",
           "spark_group_priority", "spark_row_priority"]
