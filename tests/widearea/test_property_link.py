"""A property's side of a wide-area link: its judgement of central's acks, and its wagers' gate.

docs/wide-area.md; Michigan R 432.1841 (play suspended after a set time without communication,
amounts reconciled on restore).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.widearea.messages import GENESIS, CentralAck, Contribution, next_message
from controller.widearea.property_link import (
    AHEAD_OF_CHAIN,
    DIVERGED,
    HEAD_DIFFERS,
    MALFORMED,
    NEVER_HEARD,
    OTHER_SITE,
    RECONCILING,
    SIGN_WIDTH,
    STALE_EPOCH,
    CentralAckAccepted,
    CentralAckRefused,
    SitePosition,
    WideAreaGate,
    judge_central_ack,
)

SITE = "lansing"
CHAIN_LENGTH = 30


def chain(length: int) -> list[str]:
    """The digests of the property's messages 0 (the genesis) to ``length``, chained for real."""
    digests = [GENESIS]
    for seq in range(1, length + 1):
        body = Contribution("wide-1", f"t{seq % 4}", f"r{seq}", seq % 7 + 1, 500)
        digests.append(next_message(SITE, seq, digests[-1], "2026-01-01T00:00:00Z", body).digest)
    return digests


DIGESTS = chain(CHAIN_LENGTH + 4)
"""The property journals CHAIN_LENGTH at most: the rest is for a forger or a confused central."""
POSITION = SitePosition(SITE, sent_high=10, acked=4, epoch=2)


def ack(through: int, epoch: int = 2, reconciled: int = 0, head: str | None = None) -> CentralAck:
    return CentralAck(
        SITE, through, DIGESTS[through] if head is None else head, 900, epoch, reconciled
    )


def judge(central: CentralAck, position: SitePosition = POSITION) -> object:
    own = DIGESTS[central.through] if 0 < central.through <= position.sent_high else None
    return judge_central_ack(central, position, own)


def refusal(central: CentralAck, position: SitePosition = POSITION) -> str:
    verdict = judge(central, position)
    assert isinstance(verdict, CentralAckRefused)
    return verdict.reason


# --- judging central's acks -----------------------------------------------------------------


def test_an_ack_of_the_propertys_own_history_trims_through_its_site_seq() -> None:
    assert judge(ack(7, reconciled=5)) == CentralAckAccepted(7, 2, 5)


def test_an_older_cumulative_ack_trims_nothing_more_but_is_accepted_as_central_hearing() -> None:
    assert judge(ack(3)) == CentralAckAccepted(4, 2, 0)
    assert judge(ack(4)) == CentralAckAccepted(4, 2, 0)


def test_an_ack_from_an_older_epoch_trims_nothing() -> None:
    assert refusal(ack(8, epoch=1)) == STALE_EPOCH


def test_a_newer_epoch_is_taken_and_older_ones_are_refused_from_then() -> None:
    verdict = judge(ack(6, epoch=3))
    assert verdict == CentralAckAccepted(6, 3, 0)
    assert isinstance(verdict, CentralAckAccepted)
    after = POSITION.after(verdict)
    assert after == SitePosition(SITE, sent_high=10, acked=6, epoch=3)
    assert refusal(ack(9, epoch=2), after) == STALE_EPOCH


def test_an_ack_of_a_message_the_property_never_journaled_is_refused() -> None:
    assert refusal(ack(11)) == AHEAD_OF_CHAIN


def test_an_ack_for_another_site_is_refused() -> None:
    misrouted = CentralAck("detroit", 5, DIGESTS[5], 900, 2, 0)
    assert refusal(misrouted) == OTHER_SITE


def test_an_ack_whose_head_is_not_the_propertys_digest_trims_nothing_and_names_both() -> None:
    # Central holds another history of message 7: a restored backup, a rewritten chain.
    verdict = judge(ack(7, head=DIGESTS[6]))
    assert isinstance(verdict, CentralAckRefused)
    assert verdict.reason == HEAD_DIFFERS
    assert DIGESTS[6] in verdict.detail
    assert DIGESTS[7] in verdict.detail


def test_an_older_ack_naming_another_history_is_refused_too() -> None:
    assert refusal(ack(2, head="f" * 64)) == HEAD_DIFFERS


def test_an_ack_the_property_cannot_check_against_its_own_message_is_refused() -> None:
    verdict = judge_central_ack(ack(7), POSITION, None)
    assert isinstance(verdict, CentralAckRefused)
    assert verdict.reason == HEAD_DIFFERS
    assert "no such message" in verdict.detail


def test_a_heartbeat_before_anything_was_applied_names_the_genesis() -> None:
    fresh = SitePosition(SITE, sent_high=0, acked=0, epoch=0)
    assert judge_central_ack(ack(0, epoch=1), fresh, None) == CentralAckAccepted(0, 1, 0)
    assert judge_central_ack(ack(0, head="0" * 63 + "1"), fresh, None) == CentralAckRefused(
        HEAD_DIFFERS, f"central's head of site_seq 0 is {'0' * 63}1, this property's {GENESIS}"
    )


def test_an_ack_claiming_a_reconciliation_beyond_what_it_applied_is_refused() -> None:
    assert refusal(ack(5, reconciled=6)) == MALFORMED
    assert refusal(ack(5, reconciled=-1)) == MALFORMED
    assert refusal(CentralAck(SITE, -1, GENESIS, 900, 2, -1)) == MALFORMED


# --- the gate of wide-area wagers -----------------------------------------------------------


def heard(reconciled: int) -> CentralAckAccepted:
    return CentralAckAccepted(reconciled, 2, reconciled)


def test_wide_area_wagers_start_closed_until_central_is_heard_and_reconciled() -> None:
    gate = WideAreaGate(grace_s=30.0)
    assert gate.reason(0.0) == NEVER_HEARD
    gate.heard(1.0, heard(0))  # a heartbeat before the property reported its totals
    assert gate.reason(1.0) == RECONCILING
    gate.connected(totals_through=12)
    gate.heard(2.0, heard(11))
    assert gate.reason(2.0) == RECONCILING
    gate.heard(3.0, heard(12))
    assert gate.is_open(3.0)
    assert gate.closes_at() == 33.0


def test_wide_area_wagers_close_after_grace_and_reopen_only_after_a_matched_reconciliation() -> (
    None
):
    gate = WideAreaGate(grace_s=30.0)
    gate.connected(totals_through=12)
    gate.heard(100.0, heard(12))
    assert gate.is_open(129.9)
    assert not gate.is_open(130.0)
    assert gate.reason(142.0) == "central not heard for 42 s"
    # The WAN comes back: contributions buffered during the cut take the chain to 20.
    gate.connected(totals_through=20)
    gate.heard(150.0, heard(12))  # central heard again, not yet reconciled through 20
    assert gate.reason(150.0) == RECONCILING
    gate.heard(151.0, heard(20))
    assert gate.is_open(151.0)


def test_a_reconciliation_of_an_earlier_connection_does_not_reopen_a_later_one() -> None:
    gate = WideAreaGate(grace_s=30.0)
    gate.connected(totals_through=5)
    gate.heard(10.0, heard(5))
    gate.connected(totals_through=9)
    assert gate.reason(10.0) == RECONCILING
    gate.heard(11.0, heard(5))  # an ack from before the reconnection, delivered after it
    assert gate.reason(11.0) == RECONCILING
    gate.heard(12.0, heard(9))
    gate.heard(13.0, heard(5))  # out of order: an older reconciliation undoes nothing
    assert gate.is_open(13.0)


def test_an_ack_naming_another_history_keeps_wide_area_wagers_closed_for_good() -> None:
    gate = WideAreaGate(grace_s=30.0)
    gate.connected(totals_through=7)
    gate.heard(1.0, heard(7))
    gate.refused(CentralAckRefused(STALE_EPOCH, "a central that was replaced"))
    assert gate.is_open(2.0)
    gate.refused(CentralAckRefused(HEAD_DIFFERS, "central holds another message 7"))
    assert gate.reason(2.0) == DIVERGED
    gate.connected(totals_through=7)
    gate.heard(3.0, heard(7))
    assert gate.reason(3.0) == DIVERGED


def test_long_silences_are_told_in_larger_units() -> None:
    gate = WideAreaGate(grace_s=30.0)
    gate.connected(totals_through=0)
    gate.heard(0.0, heard(0))
    assert gate.reason(99.9) == "central not heard for 99 s"
    assert gate.reason(100.0) == "central not heard for 1 min"
    assert gate.reason(3 * 3600.0) == "central not heard for 3 h"
    assert gate.reason(12 * 86400.0) == "central not heard for 12 d"
    assert gate.reason(1e12) == "central not heard for 999 d"


@given(
    grace=st.floats(0.001, 1e6),
    heard_at=st.floats(0.0, 1e9),
    later=st.floats(0.0, 1e12),
    connected=st.booleans(),
)
def test_every_reason_fits_the_sign(
    grace: float, heard_at: float, later: float, *, connected: bool
) -> None:
    gate = WideAreaGate(grace_s=grace)
    reasons = [gate.reason(heard_at)]
    if connected:
        gate.connected(totals_through=3)
    gate.heard(heard_at, heard(0))
    reasons += [gate.reason(heard_at), gate.reason(heard_at + later)]
    gate.refused(CentralAckRefused(HEAD_DIFFERS, ""))
    reasons.append(gate.reason(heard_at))
    assert all(len(reason) < SIGN_WIDTH for reason in reasons if reason is not None)


# --- random histories -----------------------------------------------------------------------

EXPECTED = {
    "valid": None,
    "stale": STALE_EPOCH,
    "ahead": AHEAD_OF_CHAIN,
    "other-site": OTHER_SITE,
    "forged-head": HEAD_DIFFERS,
    "malformed": MALFORMED,
}
ROUTINE = ("send", "send", "connect", "tick", "tick", "valid", "valid", "valid", "replay")
TROUBLE = ("stale", "ahead", "other-site", "malformed", "replay")
# Half the histories never meet a forged head, which closes the gate for good.
KINDS = st.sampled_from([(*ROUTINE, *TROUBLE), (*ROUTINE, *TROUBLE, "forged-head")])
steps = KINDS.flatmap(
    lambda kinds: st.lists(
        st.tuples(st.sampled_from(kinds), st.integers(0, 40), st.integers(0, 3)),
        min_size=10,
        max_size=80,
    )
)


@dataclass
class Link:
    """The property's position and gate, and what the test knows the gate must respect."""

    position: SitePosition = field(default_factory=lambda: SitePosition(SITE, 0, 0, 0))
    gate: WideAreaGate = field(default_factory=lambda: WideAreaGate(grace_s=30.0))
    central_epoch: int = 0
    now: float = 0.0
    sent: list[CentralAck] = field(default_factory=list)
    reconciling_from: int | None = None
    covered: bool = False
    """An accepted ack reconciled through the latest connection's totals since it was made."""
    last_heard: float | None = None
    diverged: bool = False

    def step(self, kind: str, a: int, b: int) -> None:
        """The property journals, connects, waits, or hears an ack of the given kind."""
        if kind == "send":
            sent_high = min(CHAIN_LENGTH, self.position.sent_high + a % 5)
            self.position = replace(self.position, sent_high=sent_high)
        elif kind == "connect":
            self.gate.connected(self.position.sent_high)
            self.reconciling_from, self.covered = self.position.sent_high, False
        elif kind == "tick":
            self.now += a * 1.5
        else:
            central = self.central_ack(kind, a, b)
            if central is not None:
                self.acknowledged(kind, central)

    def acknowledged(self, kind: str, central: CentralAck) -> None:
        """The property judges an ack and acts on it as its link would."""
        self.sent.append(central)
        self.central_epoch = max(self.central_epoch, central.epoch)
        verdict = judge(central, self.position)
        if kind != "replay":
            assert EXPECTED[kind] == getattr(verdict, "reason", None)
        if isinstance(verdict, CentralAckRefused):
            self.gate.refused(verdict)
            self.diverged |= verdict.reason == HEAD_DIFFERS
            return
        assert isinstance(verdict, CentralAckAccepted)
        assert self.position.acked <= verdict.through <= self.position.sent_high
        assert verdict.epoch >= self.position.epoch
        self.position = self.position.after(verdict)
        self.gate.heard(self.now, verdict)
        self.last_heard = self.now
        if self.reconciling_from is not None:
            self.covered |= verdict.reconciled_through >= self.reconciling_from

    def check_gate(self) -> None:
        """Open only if heard within grace, reconciled since connecting, and never diverged."""
        if self.gate.is_open(self.now):
            assert self.covered
            assert not self.diverged
            assert self.last_heard is not None
            assert self.now - self.last_heard < self.gate.grace_s

    def central_ack(self, kind: str, a: int, b: int) -> CentralAck | None:
        """One ack of the kind, as central (or a hostile or confused one) would send it."""
        position, epoch = self.position, self.central_epoch
        through = max(0, position.sent_high - a % 4)  # central is mostly nearly caught up
        reconciled = through if b % 2 == 0 else max(0, through - b)
        head = DIGESTS[through]
        if kind == "valid":
            return CentralAck(SITE, through, head, 900 + a, epoch + b % 2, reconciled)
        if kind == "stale":
            return CentralAck(SITE, through, head, 1, position.epoch - 1 - b, reconciled)
        if kind == "ahead":
            beyond = position.sent_high + 1 + b
            return CentralAck(SITE, beyond, DIGESTS[beyond], 1, epoch, 0)
        if kind == "other-site":
            return CentralAck("detroit", through, head, 1, epoch, reconciled)
        if kind == "forged-head":
            return CentralAck(SITE, through, DIGESTS[through + 1 + b], 1, epoch, 0)
        if kind == "malformed":
            return CentralAck(SITE, through, head, 1, epoch, through + 1 + b)
        return self.sent[a % len(self.sent)] if self.sent else None  # duplicated, out of order


@settings(max_examples=500)
@given(steps=steps)
def test_random_acks_never_trim_backwards_or_past_the_chain_nor_open_an_unreconciled_gate(
    steps: list[tuple[str, int, int]],
) -> None:
    link = Link()
    for kind, a, b in steps:
        link.step(kind, a, b)
        link.check_gate()
