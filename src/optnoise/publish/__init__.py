"""The publishing core: what every publication of a dataset shares (here: the privacy ledger, :mod:`.ledger`)."""
