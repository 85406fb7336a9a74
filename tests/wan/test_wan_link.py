"""The WAN test, short form: two properties and central on loopback, the WAN cut four times.

docs/wide-area.md, "The WAN test". Central and two properties, each a real ``jackpotd run``
on its own journal and broker, their tables playing over MQTT, each property reaching
central's broker over TLS through a link the test cuts (tests/support/widearea/wan/). The cuts: a
partition within the grace, a reset past it, a reset while a hit is being claimed, and a
partition of both properties past the grace while a claim races its award. Then the floor
stops, every link drains, and the three journals must say: every contribution each property
journaled applied at central once, every hit awarded once and paid once, each property's
chain reconciled to its end, no wide-area wager taken while a gate was closed nor after the
grace ran out, and each reopening only after central matched the property's totals (Michigan
R 432.1841). ``make wan`` runs the full form (20 cuts the seed chooses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.widearea.wan.checks import GRACE_SLACK_S
from support.widearea.wan.session import SHORT_S, CutPlan, wan_session

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.fault, pytest.mark.slow]

SEED = 11
PAST_GRACE_S = 8.0
"""Past the grace (5 s, the shortest allowed): the gate closes, and reopens only reconciled."""


def test_wan_cuts_lose_no_contribution_award_no_hit_twice_and_every_property_reconciles(
    tmp_path: Path,
) -> None:
    with wan_session(SEED, tmp_path) as session:
        atlantic, boardwalk = sites = tuple(session.properties)
        grace_s = session.lab.settings.grace_s
        session.play_for(2.0)
        within = session.cut(CutPlan((atlantic,), "stall", SHORT_S))
        past = session.cut(CutPlan((boardwalk,), "reset", PAST_GRACE_S))
        held = session.cut(CutPlan((atlantic,), "reset", SHORT_S, "hit-lock"))
        both = session.cut(CutPlan(sites, "stall", PAST_GRACE_S, "hit-claim"))
        session.drain()
        found = session.findings()
        central = session.central_problems()
        logs = session.logs()
    for each in found:
        assert each.passed, (each, logs[-6000:])
        assert each.reconciled
        assert each.claims > 0  # wide-area hits were claimed, each awarded and paid once
        assert each.refused_while_closed > 0  # its gate closed: wide-area wagers were refused
        assert each.local_wagers_during_cuts > 0  # local play went on through its cuts
        assert each.meters_seen > 0  # its signs showed central's meter
        assert each.closings_shown > 0  # its signs showed why wide-area play closed
        assert each.worst_meter_lag_uncut_s is not None
        assert each.worst_ack_lag_uncut_s is not None
    assert within.closed_after_s == {atlantic: None}  # within the grace: it stayed open
    for cut in (past, both):  # past it: closed once central was silent grace_s, not later
        for closed in cut.closed_after_s.values():
            assert closed is not None
            # (unless the host stepped the wall clock meanwhile: the journals' times with it)
            assert closed <= grace_s + GRACE_SLACK_S or cut.clock_step_s
    assert held.claims  # a hit claimed while the WAN was down: held, then awarded and paid
    # Nothing journaled at central under an id it had journaled with other content (a resend
    # that is not one): a property's totals reported again through the same site_seq once its
    # held claims were paid were one (controller/wide_events.py, totals_event_id).
    assert not central, (central, logs[-6000:])
