"""The publishing core beneath ``table`` (a release of a table per record) and ``query``
(statistics of a table per unit): what both publish about a person, and nothing of either.

* :mod:`.unit` -- the privacy unit (:class:`~.unit.PrivacyUnit`) and what each unit protects,
  in words;
* :mod:`.accountant` -- the one place a unit's total is composed over the parts one unit can
  move (basic, PLD, the pure-sum shortcut, the attack readout, the budget checks);
* :mod:`.document` -- the document's header, the statement in words, seeded withholding;
* :mod:`.spec` -- the spec reader (TOML, sections, the budget) with one set of number rules;
* :mod:`.files` -- the input's readers (formats, columns, streamed batches, digests);
* :mod:`.spark` -- the Spark helpers (the session, the driver's file, quiet failures, the
  bad value's data row).

``table`` and ``query`` sit above this package and never import each other
(``tests/test_layering.py``). Heavy modules are imported where they are used.
"""
