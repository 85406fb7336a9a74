"""The checks every journal row passes: shared by ``verify``, its verification, the start-up check.

:class:`VerifyReport` gathers what a check finds; :func:`replay_row` applies a row's stored
event to the state rebuilt so far and compares the outcome, reason and effects it gives with the
stored ones; :func:`check_link` checks the row's place in the hash chain. The domain the rows
are replayed with (:class:`controller.journal.domain.Domain`) is handed in: it applies each
event, and holds the materialized state to the replayed one. Each backend's reading of its rows
(controller/journal/sqlite/verify.py, controller/journal/postgres/checks.py) and the start-up check
(controller/journal/state_check.py) run them, so that no backend checks a row differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.effects import AnyEffect, PayoutMade, Verified, encode_effects
from controller.events import decode_event, encode_event
from controller.journal.appending import payout_columns
from controller.journal.chain import GENESIS, row_hash
from controller.journal.checkpoint_audit import VERIFIED
from controller.ports import APPLIED, REJECTED

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.journal.checkpoint_audit import CheckpointSummary
    from controller.journal.domain import Domain, State

MAX_PROBLEMS: Final = 20


@dataclass(slots=True)
class VerifyReport:
    """What verification found."""

    rows: int = 0
    pools: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    head: tuple[int, str] = (0, GENESIS)
    """The last row and its hash: what to keep off the box as an anchor."""
    checkpoints: list[CheckpointSummary] = field(default_factory=list)
    keys: int = 0
    """Controller public keys the checkpoints' signatures were checked with."""
    anchors: int = 0
    """Saved heads checked."""
    archived: int = 0
    """The last row moved out to an archive segment (0: none): rows 1 to it are archived."""
    segments: int = 0
    """Archive segments the journal records."""
    segments_checked: bool = False
    """Whether the segments were verified with the live rows (``archives`` given)."""
    notes: list[str] = field(default_factory=list)
    """What was not checked, and why (not a failure)."""
    skipped: list[str] = field(default_factory=list)
    """The checks of checkpoints and anchors left out, and why (also among ``notes``)."""
    writers: dict[str, int] = field(default_factory=dict)
    """Rows by who journaled them (:func:`~controller.journal.provenance.writer_of`)."""

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    @property
    def signatures_checked(self) -> int:
        """Checkpoints whose signature verified under a controller key given."""
        return sum(1 for summary in self.checkpoints if summary.signature == VERIFIED)

    def unchecked(self) -> list[str]:
        """What this verification did not prove, plainly: ``verify --strict`` fails on any.

        Without a checkpoint signature checked, the chain and the replay prove only that the
        journal is consistent, not that the controller wrote it: anyone who can write the file
        can rebuild a chain that passes (docs/security.md, section 2.3).
        """
        said = []
        if not self.signatures_checked:
            if not self.keys:
                why = "no controller public key given (--controller-key FILE or --anchor FILE)"
            else:
                why = "the rows verified hold no checkpoint"
            said.append(f"no checkpoint signature was checked: {why}")
        return said + self.skipped

    def skip(self, text: str) -> None:
        """Record a check of a checkpoint or anchor left out (a note, not a failure)."""
        self.notes.append(text)
        self.skipped.append(text)

    def problem(self, text: str) -> None:
        """Record a problem (the first few are kept)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


Payouts = dict[str, dict[str, object]]


def _expect_payouts(
    payouts: Payouts, row: dict[str, object], effects: tuple[AnyEffect, ...]
) -> None:
    """What the ``payouts`` table must hold after this row, by the replayed effects."""
    seq = int(str(row["seq"]))
    for effect in effects:
        if isinstance(effect, PayoutMade):
            payouts[effect.payout_id] = payout_columns(effect, seq, str(row["at"]))
        elif isinstance(effect, Verified) and effect.payout_id in payouts:
            payouts[effect.payout_id] |= {
                "status": "paid",
                "verified_by": effect.by,
                "verified_seq": seq,
            }


def replay_row(  # noqa: PLR0913, PLR0917 - the domain, the state, the row, the findings
    domain: Domain[State],
    state: State,
    row: dict[str, object],
    report: VerifyReport,
    payouts: Payouts,
    event: AnyEvent | None = None,
) -> State:
    """The state after one journal row, whose outcome and effects the replay must give.

    ``domain`` applies the row's event (:meth:`controller.journal.domain.Domain.step`);
    ``event``: the row's event, if it was decoded already.
    """
    seq = row["seq"]
    if event is None:
        try:
            event = decode_event(str(row["event"]))
        except msgspec.MsgspecError as error:
            report.problem(f"row {seq}: the stored event does not decode: {error}")
            return state
    if event.event_id != row["event_id"] or encode_event(event).decode() != row["event"]:
        report.problem(f"row {seq}: the event's id or text differs from the row")
    new_state, effects, refused = domain.step(state, event)
    outcome, reason = (APPLIED, "") if refused is None else (REJECTED, refused)
    if (outcome, reason) != (row["outcome"], row["reason"]):
        report.problem(
            f"row {seq}: replay gives {outcome} {reason!r}, the journal says "
            f"{row['outcome']} {row['reason']!r}"
        )
    if encode_effects(effects).decode() != row["effects"]:
        report.problem(f"row {seq}: replay gives other effects than the journal records")
    _expect_payouts(payouts, row, effects)
    return new_state


def check_link(row: dict[str, Any], expected: int, previous: str, report: VerifyReport) -> None:
    """The row's place in the chain: its number, the hash before it and its own."""
    if row["seq"] != expected:
        report.problem(f"row {row['seq']}: expected row {expected}; rows are missing")
    if row["prev_hash"] != previous:
        report.problem(f"row {row['seq']}: the chain is broken (previous hash differs)")
    if row_hash(row["prev_hash"], row) != row["hash"]:
        report.problem(f"row {row['seq']}: the row's contents do not match its hash")


PROGRESS_ROWS: Final = 5_000
"""Rows between two calls of ``verify``'s ``progress``."""
