"""A property's outbox to central: the site messages its journal queued, as a table.

docs/wide-area.md, "The chain of a property's messages". Each :class:`SiteMessageQueued`
effect of a committed batch is a row of ``site_messages``: its ``site_seq`` (the primary
key), the message as canonical JSON (:func:`controller.widearea.messages.canonical`) and the
journal row that queued it. Both backends insert it in the transaction of that row
(:mod:`controller.journal.sqlite.store`, :mod:`controller.journal.postgres.materialize`), so a
message is in the outbox exactly when its row is in the journal. The link's uplink sends the
messages after the last ``site_seq`` central acknowledged (``JournalPort.site_messages``).

A message is never inserted twice: a duplicate event makes no effects, and the ledger numbers
each message once. The primary key refuses a second insert of a ``site_seq`` anyway (the whole
batch is then not written and the sequencer fails closed): two messages under one number are
a forked chain, which central refuses for good (:mod:`controller.widearea.site_link`).

The table is derived from the rows, so it is checked, never trusted: someone who can write
the journal could delete an unsent message, or alter one before the uplink signs it.

* **Every read** (:class:`OutboxRead`) gives a message only if it is the effect its journal
  row recorded, that row's hash holding; no ``site_seq`` may be missing, through the ledger's
  own chain head. Otherwise it raises :class:`JournalError` and nothing is sent. A message
  whose row was archived (archiving leaves this table whole: an unsent message outlives its
  row) must hold its digest and link to the one before it.
* **``jackpotd verify``** (:class:`QueuedMessages`) compares the whole table with the
  ``SiteMessageQueued`` effects of the rows it replays: missing, altered and extra messages
  are problems; those of archived rows it did not read must chain to the replayed chain head.
* **The start-up check** reads no materialized table derived from effects (``payouts``
  neither): it checks the ledger state, the chain head included, which every read then
  holds the table to.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

import msgspec

from controller.effects import decode_effects
from controller.journal.chain import GENESIS, row_hash
from controller.journal.errors import JournalError, SchemaError
from controller.wide_effects import SiteMessageQueued
from controller.widearea.messages import canonical, decode_message, digest_holds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from controller.effects import AnyEffect
    from controller.journal.rows import Row
    from controller.widearea.messages import SiteMessage

Outboxed = tuple[int, str, int]
"""A row of ``site_messages``: ``site_seq``, the message (canonical JSON), the journal row."""
Head = tuple[int, str]
"""The ledger's chain head: its last ``site_seq`` and that message's digest."""


class ChainHead(Protocol):
    """The ledger's chain of a property's messages, as far as the outbox is checked against it."""

    @property
    def seq(self) -> int:
        """Its last ``site_seq``."""

    @property
    def head(self) -> str:
        """That message's digest."""


_AHEAD: Final = 500
"""Messages read at a time past a page of archived rows' messages, to the first live one."""

_TAG: Final = '"site-message"'
QUEUING: Final = f"%{_TAG}%"
"""A ``LIKE`` pattern every stored effects text holding a site message matches (its tag)."""


def queued_rows(queued: Iterable[tuple[int, SiteMessageQueued]]) -> list[Outboxed]:
    """The ``site_messages`` rows of effects queued at their journal rows."""
    return [
        (effect.message.site_seq, canonical(effect.message).decode(), seq) for seq, effect in queued
    ]


def _queued_by(seq: int, effects: Iterable[AnyEffect]) -> list[Outboxed]:
    return queued_rows((seq, e) for e in effects if isinstance(e, SiteMessageQueued))


def queued_by_rows(seqs: Iterable[int], row_of: Callable[[int], Row | None]) -> list[Outboxed]:
    """The outbox rows journal rows ``seqs`` queued; :class:`SchemaError` if one does not read.

    A migration's: the rows journaled before the table existed (an edited row stops it, and
    the journal is left as it was, as migration 10 does).
    """
    made: list[Outboxed] = []
    for seq in seqs:
        row = row_of(seq)
        why = _unreadable(row)
        if row is None or row.effects is None or why:
            raise SchemaError(
                f"journal row {seq} {why}, so the site messages it queued cannot be put in "
                "the outbox: run jackpotd verify; the journal was left as it was"
            )
        made += _queued_by(seq, row.effects)
    return made


def _unreadable(row: Row | None) -> str:
    """Why a journal row's effects cannot be taken as journaled (empty if they can)."""
    if row is None:
        return "is missing"
    values = row.values
    if row.form or row.effects is None:
        return row.form or "has effects that do not read"
    if row_hash(values["prev_hash"], values) != values["hash"]:
        return "does not hash to its stored hash"
    return ""


def _decoded(text: str) -> SiteMessage | None:
    try:
        return decode_message(text.encode())
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


@dataclass(frozen=True, slots=True)
class OutboxRead:
    """One read of the outbox, checked (the module docstring)."""

    where: str
    """What names the journal in errors."""
    head: Head
    """The ledger's chain head: its last ``site_seq`` and that message's digest."""
    archived: int
    """The last journal row moved out to an archive segment (0 if none)."""
    page_of: Callable[[int, int], list[Outboxed]]
    """The stored rows after a ``site_seq``, in order, at most so many."""
    row_of: Callable[[int], Row | None]
    """A live journal row by its ``seq``; None if the journal does not hold it."""

    def read(self, after: int, limit: int) -> list[SiteMessage]:
        """The messages after ``site_seq`` ``after``, at most ``limit``, each checked."""
        after = max(after, 0)  # site_seq counts from 1
        found = self.page_of(after, limit)
        messages = self._contiguous(after, found)
        if len(messages) < limit and after + len(messages) < self.head[0]:
            raise self._edited(after + len(messages) + 1, "is missing")
        for message, (_, _, seq) in zip(messages, found, strict=True):
            if seq > self.archived:
                self._queued(message, seq)
        # The archived rows' messages come first: the rows are in order (_contiguous).
        archived = [m for m, row in zip(messages, found, strict=True) if row[2] <= self.archived]
        if archived:
            self._anchored(archived, messages[len(archived) :])
        return messages

    def _contiguous(self, after: int, found: Sequence[Outboxed]) -> list[SiteMessage]:
        """The rows' messages, numbered ``after + 1`` on with none missing."""
        messages, row = [], 0
        for number, (site_seq, text, seq) in enumerate(found, start=after + 1):
            if site_seq != number:
                raise self._edited(number, "is missing")
            if seq < row:  # the ledger queues them in the order of its rows
                raise self._edited(number, f"names journal row {seq}, before its predecessor's")
            row = seq
            message = _decoded(text)
            if message is None or message.site_seq != site_seq:
                raise self._edited(site_seq, "does not read as a site message of that number")
            messages.append(message)
        return messages

    def _queued(self, message: SiteMessage, seq: int) -> None:
        """The message must be an effect its live journal row recorded, the row unedited."""
        row = self.row_of(seq)
        number = message.site_seq
        if row is None:
            raise self._edited(number, f"names journal row {seq}, which the journal does not hold")
        if _unreadable(row) or row.effects is None:
            raise self._edited(number, f"was queued by journal row {seq}, which was edited")
        if SiteMessageQueued(message) not in row.effects:
            raise self._edited(number, f"is not what journal row {seq} queued")

    def _anchored(self, archived: list[SiteMessage], live: list[SiteMessage]) -> None:
        """Messages of archived rows: a chain that ends where the journal's continues.

        Their rows are in segments, so each is held to the next: every digest holds, every
        message links to the one before, up to the first message of a live row (checked
        against its row) or, if none follows, the ledger's chain head.
        """
        run = list(archived)
        while not live:  # read on to the first live row's message, or the table's end
            found = self.page_of(run[-1].site_seq, _AHEAD)
            more = self._contiguous(run[-1].site_seq, found)
            if not more:
                break
            for message, (_, _, seq) in zip(more, found, strict=True):
                if seq > self.archived:
                    self._queued(message, seq)
                    live = [message]
                    break
                run.append(message)
        for before, message in itertools.pairwise([*run, *live[:1]]):
            if message.prev != before.digest:
                raise self._edited(before.site_seq, "is not the one its successor links to")
        for message in run:
            if not digest_holds(message):
                raise self._edited(message.site_seq, "does not hold its digest (row archived)")
        if not live and (run[-1].site_seq, run[-1].digest) != self.head:
            raise self._edited(run[-1].site_seq, "is not the head of the ledger's chain")

    def _edited(self, number: int, what: str) -> JournalError:
        return JournalError(
            f"{self.where}: site message {number} {what}: the outbox was edited, nothing is "
            "sent (run jackpotd verify)"
        )


@dataclass(slots=True)
class QueuedMessages:
    """What ``jackpotd verify`` expects of the outbox: the messages the replayed rows queued."""

    made: dict[int, tuple[Outboxed, SiteMessage]] = field(default_factory=dict)
    """By ``site_seq``: each message a replayed row's effects queued, as its row and itself."""
    unread: list[tuple[int, int]] = field(default_factory=list)
    """The ranges of journal rows not replayed (archived, their segments not read)."""

    def note(self, row: Row) -> None:
        """A replayed journal row: the messages its journaled effects queued, if any."""
        effects = row.effects
        text = str(row.values["effects"])
        if effects is None and _TAG in text:  # a segment's row: its canonical text only
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                effects = tuple(decode_effects(text))
        seq = int(row.values["seq"])
        for effect in effects or ():
            if isinstance(effect, SiteMessageQueued):
                message = effect.message
                made = (message.site_seq, canonical(message).decode(), seq)
                self.made[message.site_seq] = (made, message)

    def skipped(self, first: int, last: int) -> None:
        """Rows ``first`` to ``last`` are not replayed: their messages are checked as a chain."""
        if first <= last:
            self.unread.append((first, last))

    def compare(
        self,
        stored: Sequence[Outboxed] | None,
        chain: ChainHead | None,
        problem: Callable[[str], None],
        note: Callable[[str], None],
    ) -> None:
        """The stored outbox against the replay (None: a schema before the table)."""
        head, digest = (chain.seq, chain.head) if chain is not None else (0, GENESIS)
        if stored is None:
            if head:
                note(
                    "site messages: the journal's schema predates the site_messages table; the "
                    "service fills it from the rows' effects when it opens the journal"
                )
            return
        kept = {row[0]: row for row in stored}
        previous: str | None = GENESIS
        for number in range(1, head + 1):
            previous = self._one(number, kept.pop(number, None), previous, problem)
        if head and previous is not None and previous != digest:
            problem(f"site message {head}: not the head of the ledger's chain of messages")
        for number, row in sorted(kept.items()):
            problem(f"site message {number}: the journal queued no such message (row {row[2]})")

    def _one(
        self,
        number: int,
        row: Outboxed | None,
        previous: str | None,
        problem: Callable[[str], None],
    ) -> str | None:
        """Check stored message ``number``; the digest the next one must link to, if known."""
        made = self.made.get(number)
        message = made[1] if made is not None else None if row is None else _decoded(row[1])
        if row is None:
            problem(f"site message {number}: missing from the outbox (site_messages)")
        elif made is not None:
            if row != made[0]:
                problem(f"site message {number}: not what journal row {made[0][2]} queued")
        elif not any(first <= row[2] <= last for first, last in self.unread):
            problem(f"site message {number}: journal row {row[2]} queued no such message")
            return None
        elif message is None or message.site_seq != number or not digest_holds(message):
            problem(f"site message {number}: not a message of the chain (its row is archived)")
            return None
        if message is None:
            return None
        if previous is not None and message.prev != previous:
            problem(f"site message {number - 1}: not the message {number} links to")
        return message.digest
