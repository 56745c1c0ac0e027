"""One module per command; importing this package registers them all on the app."""

from . import compare, demo, design, families, ledger, query, release, reproduce, rr, sample, staircase, verify, wasserstein

__all__ = ["compare", "demo", "design", "families", "ledger", "query", "release", "reproduce", "rr", "sample", "staircase", "verify",
           "wasserstein"]
