"""The agent's judgement of acknowledgements, and the controller's cumulative count per boot."""

from __future__ import annotations

from controller.agent.acks import (
    AFTER_GAP,
    AHEAD,
    NOTHING_CONFIRMED,
    OTHER_BOOT,
    OTHER_TABLE,
    STALE_EPOCH,
    Ack,
    AckAccepted,
    AckRefused,
    Admission,
    Confirmed,
    CumulativeAcks,
    OutboxPosition,
    judge_ack,
)

POSITION = OutboxPosition("t1", "boot-a", stored_high=10, acked=4, epoch=2)


def test_an_ack_for_the_agents_table_and_boot_trims_through_its_seq() -> None:
    assert judge_ack(Ack("t1", "boot-a", 7, 812, 2), POSITION) == AckAccepted(7, 2)


def test_an_older_ack_trims_nothing_but_is_accepted_as_the_controller_hearing() -> None:
    assert judge_ack(Ack("t1", "boot-a", 3, 700, 2), POSITION) == AckAccepted(4, 2)
    assert judge_ack(Ack("t1", "boot-a", 0, 0, 2), POSITION) == AckAccepted(4, 2)


def test_a_forged_or_misrouted_ack_is_refused_with_its_reason() -> None:
    cases = {
        OTHER_TABLE: Ack("t2", "boot-a", 5, 1, 2),
        OTHER_BOOT: Ack("t1", "boot-b", 5, 1, 2),
        AHEAD: Ack("t1", "boot-a", 11, 1, 2),
        STALE_EPOCH: Ack("t1", "boot-a", 5, 1, 1),
    }
    for reason, ack in cases.items():
        verdict = judge_ack(ack, POSITION)
        assert isinstance(verdict, AckRefused)
        assert verdict.reason == reason


def test_a_newer_epoch_is_taken() -> None:
    assert judge_ack(Ack("t1", "boot-a", 5, 9000, 3), POSITION) == AckAccepted(5, 3)


def test_the_controller_acknowledges_only_what_is_journaled_in_order() -> None:
    acks = CumulativeAcks()
    assert acks.acknowledged("t1", "b") == NOTHING_CONFIRMED
    assert [acks.admit("t1", "b", seq, 0) for seq in (1, 2, 3)] == [Admission.SUBMIT] * 3
    acks.journaled("t1", "b", 2, 50)  # not the next one: nothing claimed
    assert acks.acknowledged("t1", "b") == NOTHING_CONFIRMED
    acks.journaled("t1", "b", 1, 49)
    acks.journaled("t1", "b", 2, 50)
    assert acks.acknowledged("t1", "b") == Confirmed(1, 2, 50)
    assert acks.admit("t1", "b", 2, 0) is Admission.JOURNALED
    assert acks.admit("t1", "b", 3, 0) is Admission.SUBMIT  # in flight: the journal applies it once


def test_an_event_past_a_gap_is_not_submitted() -> None:
    acks = CumulativeAcks()
    assert acks.admit("t1", "b", 1, 0) is Admission.SUBMIT
    assert acks.admit("t1", "b", 3, 0) is Admission.GAP
    assert acks.admit("t1", "b", 2, 0) is Admission.SUBMIT
    assert acks.admit("t1", "b", 3, 0) is Admission.SUBMIT


def test_a_new_connection_submits_again_what_was_not_journaled() -> None:
    acks = CumulativeAcks()
    for seq in (1, 2, 3):
        acks.admit("t1", "b", seq, 0)
    acks.journaled("t1", "b", 1, 10)
    acks.restart()
    assert acks.admit("t1", "b", 3, 0) is Admission.GAP
    assert acks.admit("t1", "b", 2, 0) is Admission.SUBMIT


def test_a_boot_first_heard_mid_stream_starts_just_after_what_the_agent_was_acknowledged() -> None:
    # A controller that starts while an agent streams may first hear seq 41, though only 29
    # was ever acknowledged (30 to 40 went to no one): it must not take them as journaled.
    acks = CumulativeAcks()
    assert acks.admit("t1", "b", 41, 29) is Admission.GAP
    assert acks.acknowledged("t1", "b") == NOTHING_CONFIRMED
    assert acks.admit("t1", "b", 30, 29) is Admission.SUBMIT  # the agent's resend, in order
    acks.journaled("t1", "b", 30, 900)
    assert acks.acknowledged("t1", "b") == Confirmed(30, 30, 900)  # the run, from 30


def test_what_another_node_acknowledged_starts_a_run_after_it() -> None:
    # This node led, then another acknowledged up to 50, then this one leads again.
    acks = CumulativeAcks()
    acks.admit("t1", "b", 1, 0)
    acks.journaled("t1", "b", 1, 7)
    assert acks.admit("t1", "b", 51, 50) is Admission.SUBMIT  # not a gap: the agent had 50
    assert acks.acknowledged("t1", "b") == NOTHING_CONFIRMED  # 50 is the agent's word only
    acks.journaled("t1", "b", 51, 80)
    assert acks.acknowledged("t1", "b") == Confirmed(51, 51, 80)


def test_a_claimed_acknowledgement_never_makes_an_event_journaled() -> None:
    acks = CumulativeAcks()
    acks.admit("t1", "b", 1, 0)
    acks.journaled("t1", "b", 1, 7)
    # A message on the table's topic says the boot was acknowledged through 1,000,000.
    assert acks.admit("t1", "b", 1_000_001, 1_000_000) is Admission.SUBMIT
    assert acks.admit("t1", "b", 2, 1) is Admission.SUBMIT  # submitted, not "journaled"
    assert acks.admit("t1", "b", 900, 1) is Admission.GAP
    acks.journaled("t1", "b", 2, 8)
    assert acks.acknowledged("t1", "b") == Confirmed(2, 2, 8)


def test_an_acknowledgement_that_starts_after_the_agents_is_refused() -> None:
    # seq 5 to 9 were never acknowledged: a run from 10 does not cover them.
    verdict = judge_ack(Ack("t1", "boot-a", 10, 1, 2, first=10), POSITION)
    assert isinstance(verdict, AckRefused)
    assert verdict.reason == AFTER_GAP
    assert judge_ack(Ack("t1", "boot-a", 10, 1, 2, first=5), POSITION) == AckAccepted(10, 2)
    assert judge_ack(Ack("t1", "boot-a", 3, 1, 2, first=3), POSITION) == AckAccepted(4, 2)


def test_boots_and_tables_are_counted_apart_and_the_oldest_forgotten() -> None:
    acks = CumulativeAcks(remembered=2)
    acks.admit("t1", "b1", 1, 0)
    acks.journaled("t1", "b1", 1, 5)
    acks.admit("t2", "b1", 1, 0)
    assert acks.admit("t1", "b2", 1, 0) is Admission.SUBMIT  # a wiped outbox: a new boot
    assert acks.acknowledged("t1", "b1") == NOTHING_CONFIRMED  # forgotten, the oldest
    assert acks.admit("t1", "b1", 2, 1) is Admission.SUBMIT  # its next one starts a run
