"""One type for everything that can be released: :class:`Mechanism`.

A mechanism is a representation (noise on the cycle ``{0..n}``, noise on the integer
line, or a channel) together with its neighbourhood and, optionally, the target it
was made for. It carries its whole life cycle::

    >>> import optnoise
    >>> mech = optnoise.additive([0.6, 0.2, 0.2], sensitivity=1)   # cyclic {0,1,2}
    >>> round(mech.privacy.epsilon_pure, 6)                        # float analysis
    1.098612
    >>> mech.certify().epsilon_pure >= mech.privacy.epsilon_pure    # exact, rounded up
    True
    >>> g = optnoise.geometric(epsilon=1.0)
    >>> round(g.privacy.delta_dp(0.5), 6)
    0.287649
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     draws = g.sample(3, seed=7)    # seeded: reproducible, NOT private, and it warns
    >>> draws.private, draws.shape, seen[0].category.__name__
    (False, (3,), 'NotPrivateWarning')

``.privacy`` is the tight float analysis; ``.certify()`` the exact one (rational,
outward rounded); ``.quantize()`` the integer-weight form that is actually sampled,
with the exact certificate of *those* weights; ``.sample`` and ``.apply`` draw from
it (the operating system's CSPRNG unless seeded). ``.save`` and
:func:`load_mechanism` use one versioned JSON schema for every kind
(docs/cli.md, "Mechanism files").

Keyword names follow other DP libraries: ``epsilon=``, ``delta=``, ``sensitivity=``.
"""

from .core import LISTED_UP_TO, SCHEMA, SCHEMA_VERSION, Draws, Kind, Mechanism, MechanismFile
from .files import EXACT_AGREEMENT, KIND_KEYS, load_mechanism, mechanism_from_json
from .make import additive, channel, from_family, geometric, make_neighbourhood

__all__ = ["EXACT_AGREEMENT", "LISTED_UP_TO", "KIND_KEYS", "SCHEMA", "SCHEMA_VERSION", "Draws", "Kind", "Mechanism", "MechanismFile",
           "additive", "channel", "from_family", "geometric", "load_mechanism", "make_neighbourhood",
           "mechanism_from_json"]
