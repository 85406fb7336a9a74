"""The failover chaos test, short form: the three-node cluster, a few tables, the main faults.

docs/ha.md, "The failover chaos test". The cluster of deploy/ha/lab on loopback, three
supervised ``jackpotd run`` nodes on its PostgreSQL journal, a floor of tables behind the real
agent code and signs following the meters (tests/support/ha/chaos/). Each fault is injected,
healed and drained, then every acknowledged event must be journaled exactly once, no hit
awarded twice, the meters recomputed from the journal equal to the leader's and every sign's,
the chain verified across epochs, no sign gone backwards and no progressive wager taken while
its table was closed. The pool's grand is a mystery level that hits within every five wagers,
so each fault lands in the middle of one of its draws: the node that takes over goes on with the
committed trigger (docs/ha.md, "Mystery levels across a failover") and every reveal checks.
``make chaos`` runs the full form (20 faults, 50 tables).
"""

from __future__ import annotations

import pytest
from support.ha.chaos.run import chaos_session

pytestmark = [pytest.mark.fault, pytest.mark.slow]

SEED = 18


def test_a_leader_killed_and_a_primary_killed_lose_nothing_and_apply_nothing_twice() -> None:
    with chaos_session(tables=6, seed=SEED) as session:
        for kind in ("leader-kill", "primary-kill"):
            found = session.run(kind)
            assert found.passed, (found, session.logs()[-6000:])
            assert found.failover_s is not None  # the floor's events were committed again
        killed, lost = session.results
        assert killed.epoch >= 2  # another sequencer took over: the chain verified across epochs
        assert lost.stored > killed.stored > 0
        assert lost.awards > 0  # jackpots were hit on the shared pool, each awarded once
        assert lost.mystery_hits >= killed.mystery_hits > 0  # across the failovers, each checked
