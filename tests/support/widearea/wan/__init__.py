"""The WAN test: two properties and central on loopback, their wide-area link cut and healed.

docs/wide-area.md, "The WAN test". :mod:`support.widearea.wan.lab` starts central (its mosquitto,
the wide-area broker, with a TLS listener for the properties, and its ``jackpotd run`` on a SQLite
journal) and two properties (each its own mosquitto for its tables and its own ``jackpotd
run``, reaching central's broker through a :class:`support.ha.tcp_proxy.LinkProxy` of its own: a
WAN cut is that proxy cut), from the files of :mod:`support.widearea.wan.config`.
:mod:`support.widearea.wan.floor` is the properties' tables and the signs, on an event loop of their
own. :mod:`support.widearea.wan.journals` reads the three journals as they grow,
:mod:`support.widearea.wan.checks` judges them once drained, :mod:`support.widearea.wan.session`
plays, cuts, heals and drains, and :mod:`support.widearea.wan.run` is the seeded full form (``python
-m support.widearea.wan.run``, ``make wan``).
"""
