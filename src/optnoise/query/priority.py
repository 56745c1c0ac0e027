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
about ``n^2 / 2^65`` among ``n``). Locally the whole batch is one AES-ECB call (OpenSSL through
``cryptography``); on Spark the same bytes come from ``aes_encrypt(block, key, 'ECB')``, whose
first 16 bytes are ``AES_k(block)`` (the last 16 encrypt the PKCS padding block), compared as
binary (unsigned, byte by byte: the order of the big-endian integers).
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


def spark_priority(key: bytes, high: Any, low: Any) -> Any:
    """The Spark column of :func:`encrypt_blocks`'s 8 bytes (binary) for the long columns
    ``high`` and ``low`` (``hex`` writes a long as 16 hex digits of its two's complement when
    negative: the unsigned big-endian bytes)."""
    from pyspark.sql import functions as F
    block = F.unhex(F.concat(F.lpad(F.hex(high), 16, "0"), F.lpad(F.hex(low), 16, "0")))
    return F.substring(F.aes_encrypt(block, F.unhex(F.lit(key.hex())), F.lit("ECB")), 1, 8)


def spark_row_priority(key: bytes, index: Any) -> Any:
    """:func:`row_priorities` as a Spark column (binary) of the read index column ``index``."""
    from pyspark.sql import functions as F
    return spark_priority(key, F.lit(0).cast("long"), index)


def spark_group_priority(key: bytes, first: Any, code: Any) -> Any:
    """:func:`group_priorities` as a Spark column (binary)."""
    from pyspark.sql import functions as F
    return spark_priority(key, code.cast("long").bitwiseOR(F.lit(-GROUP_TAG).cast("long")), first)


__all__ = ["GROUP_TAG", "KEY_BYTES", "draw_key", "encrypt_blocks", "group_priorities", "row_priorities",
           "spark_group_priority", "spark_priority", "spark_row_priority"]
