"""The failover chaos test's harness: a three-node cluster, a floor of agents, seeded faults.

:mod:`support.ha.chaos.floor` is the floor's process (simulated tables behind the real agent
code, and followers); :mod:`support.ha.chaos.nodes` runs the three controller nodes on the lab
cluster as systemd would; :mod:`support.ha.chaos.faults` chooses and injects the faults;
:mod:`support.ha.chaos.checks` reads the journal after each fault and counts what went wrong;
:mod:`support.ha.chaos.run` puts them together (``python -m support.ha.chaos.run``, ``make chaos``).
docs/ha.md, "The failover chaos test", says what it proves and what it cannot.
"""
