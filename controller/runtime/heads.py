"""The running controller's signed heads: its high-water mark, kept outside the journal.

Every acknowledgement to a device follows the commit of its event; a rollback of the journal
(a restored backup, a rebuilt file) would drop acknowledged rows without a trace if nothing
outside the journal remembered how far it had come. So after each commit the sequencer asks
:class:`HeadSchedule` whether a signed head is due: every ``[controller] head_rows`` rows
(default 100), or ``head_interval_s`` seconds (default 1) after a row if fewer came. A head is
signed with the controller's key (:mod:`controller.journal.high_water`), written to the
high-water file (replaced atomically and flushed) and published (a retained MQTT topic,
``controller/<id>/head``). So no acknowledged row stays uncovered by a signed head for more
than those rows or seconds (docs/security.md, "History never goes back").

At start-up (:func:`load_high_water`) the file's head is read and its signature checked with the
controller's key; the start-up check then refuses a journal that no longer holds that row with
that hash (:mod:`controller.journal.state_trust`), before anything is signed over it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from controller.journal.high_water import (
    HighWaterError,
    HighWaterFileError,
    head_verifies,
    high_water_path,
    read_high_water,
    sign_head,
    write_high_water,
)
from controller.outputs import HeadUpdate, SignedHead
from controller.security.signer import as_controller_key

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.config.load import Config
    from controller.ledger.state import LedgerState
    from controller.ledger_journal import LedgerJournal
    from controller.security.signer import Signer

log = logging.getLogger(__name__)

SAY_EVERY_S: Final = 60.0
"""How often a high-water file that keeps refusing heads is logged again."""


def load_high_water(path: Path, key: Signer) -> SignedHead | None:
    """The signed head the high-water file holds (None: none yet), its signature checked.

    A head under this controller's key id whose signature does not verify is refused: someone
    wrote the file. One under another key id (before a rotation of the key) is passed over.
    """
    head = read_high_water(path)
    if head is not None and head.key_id != key.key_id:
        log.warning(
            "%s: the high-water mark is signed by key %s, not this controller's %s (a key "
            "rotated): passed over; the new key's marks follow",
            path, head.key_id, key.key_id,
        )  # fmt: skip
        return None
    if head is not None and not head_verifies(head, [key.public_key]):
        raise HighWaterFileError(
            f"{path}: the high-water mark is not signed by this controller's key "
            f"({key.key_id}): refusing to start on a mark someone else wrote"
        )
    return head


def published_marks(payloads: Sequence[bytes], key: Signer) -> list[SignedHead]:
    """The signed heads among ``payloads`` (read back from where they were published).

    One that does not decode, or is not signed by this controller's key, is passed over and
    said so: whoever can write where heads are published must not be able to stop the start
    with junk (nothing unsigned pulls a lever); only a genuine mark counts.
    """
    marks: list[SignedHead] = []
    for payload in payloads:
        try:
            head = msgspec.json.decode(payload, type=SignedHead)
        except msgspec.MsgspecError as error:
            log.warning("a published head that does not decode is passed over: %s", error)
            continue
        if head.key_id != key.key_id or not head_verifies(head, [key.public_key]):
            log.warning(
                "a published head of row %d not signed by this controller's key (%s) is "
                "passed over",
                head.seq, key.key_id,
            )  # fmt: skip
            continue
        marks.append(head)
    return marks


def central_marks(head: SignedHead | None, key: Signer) -> list[SignedHead]:
    """The mark central answered (its copy of this property's highest head), checked.

    Under another key id (the key was rotated since central kept it) it is passed over and
    said so. Under this key id it must verify: one that does not is refused as a forged
    high-water file is (:class:`HighWaterFileError`): central signed the answer, so a mark in
    it that is not this controller's is no junk of a broker's user but a wrong central.
    """
    if head is None:
        return []
    if head.key_id != key.key_id:
        log.warning(
            "central's mark of row %d is signed by key %s, not this controller's %s (a key "
            "rotated): passed over",
            head.seq, head.key_id, key.key_id,
        )  # fmt: skip
        return []
    if not head_verifies(head, [key.public_key]):
        raise HighWaterFileError(
            f"central's mark of row {head.seq} is not signed by this controller's key "
            f"({key.key_id}): refusing to start on a mark someone else wrote"
        )
    log.info("central keeps the signed head of row %d", head.seq)
    return [head]


class HeadSchedule:
    """When the next signed head is due; signing, keeping and publishing it."""

    def __init__(  # noqa: PLR0913 - the key, where it goes, and when
        self,
        key: Signer,
        controller: str,
        path: Path,
        *,
        every_rows: int = 100,
        every_s: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.controller = controller
        self.path = path
        self.every_rows = every_rows
        self.every_s = every_s
        self.monotonic = monotonic
        self.last: SignedHead | None = None
        """The last head signed (or found in the file at start-up)."""
        self._first_unsigned: float | None = None
        """When the first row after the last head was seen (monotonic), None if none."""
        self.signed = 0
        """Heads signed by this schedule (bench/heads.py counts them)."""
        self._failures = 0
        """Heads the file could not take since the last it took."""
        self._retry_at = 0.0
        """Not before then (monotonic) is a head tried again after the file refused one."""
        self._said_at = 0.0
        self.on_signed: list[Callable[[SignedHead], None]] = []
        """Called on the event loop with each head signed and published (the uplink's)."""

    @classmethod
    def of(cls, config: Config, key: Signer) -> HeadSchedule:
        """The schedule ``config`` sets, signing with ``key``."""
        settings = config.controller
        configured = settings.high_water_file
        path = (
            Path(configured)
            if configured
            else high_water_path(str(settings.journal), settings.node)
        )
        return cls(
            key,
            settings.controller_id,
            path,
            every_rows=settings.head_rows,
            every_s=settings.head_interval_s,
        )

    def resume(self) -> SignedHead | None:
        """The mark the file holds, checked (see :func:`load_high_water`); kept as the last."""
        self.last = load_high_water(self.path, self.key)
        return self.last

    def raise_to(self, marks: Sequence[SignedHead]) -> None:
        """Take the highest of ``marks`` as the mark if it is above the file's.

        The file may have gone back with the journal (both are the service's to write); the
        copy published off the box is then the higher, and the one the journal must hold.
        """
        for mark in marks:
            if self.last is None or mark.seq > self.last.seq:
                log.info("the signed head of row %d read back is the high-water mark", mark.seq)
                self.last = mark

    def accepted(self, state: LedgerState) -> None:
        """Drop a mark two managers accepted to lose (a restore): the next head starts anew."""
        mark, binding = self.last, state.binding
        if mark is not None and binding is not None and (mark.seq, mark.hash) in binding.accepted:
            log.warning(
                "the high-water mark of row %d was accepted as lost by a restore: signing the "
                "restored journal's head from here",
                mark.seq,
            )
            self.last = None

    def failed(self, error: OSError) -> str | None:
        """The file could not take a head: try again in ``every_s``; a line to log, or None.

        One line at the first failure, then one a minute with the count, so that a folder
        missing or a disk full never floods the log (the sequencer goes on: the bound is
        broken until the file takes a head again, which the line says).
        """
        self._failures += 1
        now = self.monotonic()
        self._retry_at = now + self.every_s
        if self._failures > 1 and now - self._said_at < SAY_EVERY_S:
            return None
        self._said_at = now
        return (
            f"cannot keep the signed head in {self.path}: {error} ({self._failures} failed; "
            "acknowledged rows are not covered by a signed head until it is kept again)"
        )

    def rows_behind(self, head_seq: int) -> int:
        """Journal rows after the last signed head."""
        return head_seq - (self.last.seq if self.last else 0)

    def due(self, head_seq: int) -> bool:
        """Whether a head is due now, the journal's last row being ``head_seq``."""
        behind = self.rows_behind(head_seq)
        if behind < 0:
            return True  # below the mark: the journal went back, and :meth:`sign` refuses it
        if behind == 0:
            self._first_unsigned = None
            return False
        if self.monotonic() < self._retry_at:
            return False
        if self._first_unsigned is None:
            self._first_unsigned = self.monotonic()
        if behind >= self.every_rows:
            return True
        return self.monotonic() - self._first_unsigned >= self.every_s

    def seconds_left(self, head_seq: int) -> float | None:
        """Seconds until a head is due by time; None while every row is covered."""
        if self.rows_behind(head_seq) <= 0 or self._first_unsigned is None:
            return None
        return max(0.0, self.every_s - (self.monotonic() - self._first_unsigned))

    def sign_if_due(
        self, journal: LedgerJournal, clock: Callable[[], str], *, closing: bool = False
    ) -> HeadUpdate | None:
        """The head signed and kept if one is due (always when closing and rows came since).

        A head the file cannot take is logged (:meth:`failed`) and tried again later; a journal
        below the mark raises :class:`HighWaterError` (the caller steps down).
        """
        head = journal.head[0]
        if not (self.due(head) or (closing and self.rows_behind(head) > 0)):
            return None
        try:
            return self.sign(journal, clock())
        except OSError as error:
            if (line := self.failed(error)) is not None:
                # One line with the reason: a full disk is no bug to trace.
                log.error("%s", line)  # noqa: TRY400
            return None

    def sign(self, journal: LedgerJournal, at: str) -> HeadUpdate:
        """Sign the journal's head, keep it in the file, and what the sinks publish of it.

        Never behind the last one: a journal whose head is below the mark it was signed at went
        back under the running controller, which then refuses to sign it (it fails closed).
        """
        seq, row_hash = journal.head
        if self.last is not None and seq < self.last.seq:
            raise HighWaterError(
                f"{journal.path}: the journal's head is row {seq}, below row {self.last.seq} "
                "the controller signed: it went back; nothing is signed over it"
            )
        binding = journal.state.binding
        head = sign_head(
            as_controller_key(self.key),
            self.controller,
            binding.journal if binding else "",
            (seq, row_hash),
            at,
        )
        write_high_water(self.path, head)
        self.last = head
        self.signed += 1
        self._first_unsigned = None
        if self._failures:
            log.warning(
                "%s: the signed head kept again, after %d failures", self.path, self._failures
            )
            self._failures = 0
        return HeadUpdate(at, seq, head)
