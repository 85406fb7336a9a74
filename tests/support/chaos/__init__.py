"""The failover chaos test's harness: a three-node cluster, a floor of agents, seeded faults.

:mod:`support.chaos.floor` is the floor's process (simulated tables behind the real agent
code, and followers); :mod:`support.chaos.nodes` runs the three controller nodes on the lab
cluster as systemd would; :mod:`support.chaos.faults` chooses and injects the faults;
:mod:`support.chaos.checks` reads the journal after each fault and counts what went wrong;
:mod:`support.chaos.run` puts them together (``python -m support.chaos.run``, ``make chaos``).
docs/ha.md, "The failover chaos test", says what it proves and what it cannot.
"""
