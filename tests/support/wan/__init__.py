"""The WAN test: two properties and central on loopback, their wide-area link cut and healed.

docs/wide-area.md, "The WAN test". :mod:`support.wan.lab` starts central (its mosquitto, the
wide-area broker, with a TLS listener for the properties, and its ``jackpotd run`` on a SQLite
journal) and two properties (each its own mosquitto for its tables and its own ``jackpotd
run``, reaching central's broker through a :class:`support.tcp_proxy.LinkProxy` of its own: a
WAN cut is that proxy cut), from the files of :mod:`support.wan.config`.
:mod:`support.wan.floor` is the properties' tables and the signs, on an event loop of their
own. :mod:`support.wan.journals` reads the three journals as they grow,
:mod:`support.wan.checks` judges them once drained, :mod:`support.wan.session` plays, cuts,
heals and drains, and :mod:`support.wan.run` is the seeded full form (``python -m
support.wan.run``, ``make wan``).
"""
