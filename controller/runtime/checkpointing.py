"""The running controller's signed checkpoints: the check at start-up, then one every so often.

**At start-up** (:func:`resume_checkpoints`, from :func:`controller.service.wiring.build_runtime`)
the materialized state is checked against the journal from the last checkpoint that verifies
(:mod:`controller.journal.state_trust`). On any difference the daemon refuses to start,
naming each value that differs, and journals the refusal as a fault. Otherwise, if rows came
after the last checkpoint (or the journal has none yet), a checkpoint is written at once, so
that the next start replays from here.

**While running**, the sequencer asks :class:`CheckpointSchedule` after each commit, and when
no event arrives, whether a checkpoint is due: every ``[controller] checkpoint_rows`` journal
rows (default 10,000), or ``checkpoint_interval_s`` seconds (default 300) after the last one
if any row came since; and one at a clean shutdown, after catching up with the rows other
processes appended meanwhile (an operator's action at the command line), so that a clean stop
leaves every row covered by a signed checkpoint. Each is journaled in its own transaction
with its snapshot, then published: a retained MQTT topic (``controller/<id>/checkpoint``),
the metrics ``jackpotd_checkpoint_seq`` and ``jackpotd_checkpoint_timestamp_seconds``, and one
log line. A checkpoint that cannot be written is tried again at the next interval.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.config.load import ConfigError
from controller.events import FaultRecorded
from controller.journal import JournalError
from controller.journal.checkpoints import Checkpointed, Sealed, seal
from controller.outputs import CheckpointUpdate
from controller.runtime.remote_signer import RemoteSigner
from controller.security.controller_key import ControllerKey, load_key, resolve
from controller.security.signer import Signer, as_controller_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.config.load import Config
    from controller.events import CheckpointRecorded
    from controller.journal.state_trust import StateCheck
    from controller.ledger_journal import LedgerJournal
    from controller.outputs import SignedHead

log = logging.getLogger(__name__)

SHOWN: Final = 5
"""Differences a refusal to start names (the fault journaled holds them all, up to a size)."""
DETAIL_MAX: Final = 8000


class StoredStateError(JournalError):
    """The materialized state is not the one the journal gives: the daemon does not start."""


def controller_key(config: Config) -> Signer:
    """The key ``[controller] key_file`` names, or the signer on ``signer_socket``.

    One line naming the file and why if neither, or if the key cannot be read or the signer
    reached (controller/runtime/remote_signer.py).
    """
    socket_path = config.controller.signer_socket
    if socket_path is not None:
        return RemoteSigner(Path(socket_path))
    text = config.controller.key_file
    if text is None:
        raise ConfigError(
            config.source,
            "controller.key_file",
            "jackpotd run signs its checkpoints with the controller's own key: make one "
            "(jackpotd key generate --out FILE) and name it here, or name the signer's socket "
            "(signer_socket)",
        )
    return load_key(resolve(text))


def schedule_for(config: Config, key: Signer | None = None) -> CheckpointSchedule:
    """The schedule of ``config``, signing with ``key``, else the key it names.

    With neither (the demo, in-process tests), a key made for this run: its checkpoints verify
    only while it runs, and the next start replays the journal from its first row.
    ``jackpotd run`` always passes the configured key (:func:`controller_key`).
    """
    settings = config.controller
    if key is None and (settings.key_file is not None or settings.signer_socket is not None):
        key = controller_key(config)
    if key is None:
        log.warning("no [controller] key_file: checkpoints are signed with a key for this run")
        key = ControllerKey.generate()
    return CheckpointSchedule(
        key,
        settings.controller_id,
        every_rows=settings.checkpoint_rows,
        every_s=settings.checkpoint_interval_s,
    )


class CheckpointSchedule:
    """When the next checkpoint is due, and the last one journaled (see the module docstring)."""

    def __init__(
        self,
        key: Signer,
        controller: str,
        *,
        every_rows: int = 10_000,
        every_s: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.controller = controller
        self.every_rows = every_rows
        self.every_s = every_s
        self.monotonic = monotonic
        self.last: Checkpointed | None = None
        """The last checkpoint journaled (or found at start-up)."""
        self._since = monotonic()
        self._sealing: str | None = None
        """The id of a checkpoint sealed and not yet journaled (its commit failed, maybe)."""

    def resume(self, last: Checkpointed | None) -> None:
        """Start from the last checkpoint the journal holds (None: it holds none)."""
        self.last = last
        self._since = self.monotonic()

    def rows_behind(self, head_seq: int) -> int:
        """Journal rows since the last checkpoint's own row."""
        return head_seq - (self.last.row if self.last else 0)

    def due(self, head_seq: int) -> bool:
        """Whether a checkpoint is due now, the journal's last row being ``head_seq``."""
        behind = self.rows_behind(head_seq)
        if behind <= 0:
            return False
        if self.monotonic() - self._since >= self.every_s:
            return True
        # By rows, once: a checkpoint that failed is tried again at the next interval.
        return behind >= self.every_rows and self._sealing is None

    def seconds_left(self, head_seq: int) -> float | None:
        """Seconds until one is due by time; None while no row came since the last one."""
        if self.rows_behind(head_seq) <= 0:
            return None
        return max(0.0, self.every_s - (self.monotonic() - self._since))

    def seal(self, journal: LedgerJournal, at: str) -> Sealed:
        """The checkpoint of the journal's head and state now, signed, to journal next."""
        self._since = self.monotonic()
        try:
            sealed = seal(
                as_controller_key(self.key),
                self.controller,
                journal.state,
                journal.head,
                at,
                domain=journal.domain,
            )
        except Exception:
            self._sealing = ""  # not signed: tried again at the next interval, not every commit
            raise
        self._sealing = sealed.event.event_id
        return sealed

    def recorded(self, row: int, event: CheckpointRecorded) -> CheckpointUpdate:
        """A checkpoint was journaled at ``row``: remember it, log it, and what to publish."""
        self.last = Checkpointed(row, event)
        self._sealing = None
        log.info(
            "checkpoint at row %d: row %d has hash %s, state %s, signed by key %s",
            row, event.head_seq, event.head_hash, event.state_digest, event.key_id,
        )  # fmt: skip
        return checkpoint_update(self.last)

    def updates(self) -> list[CheckpointUpdate]:
        """The last checkpoint as an update (for the sinks at start-up), if there is one."""
        return [checkpoint_update(self.last)] if self.last else []

    @property
    def last_timestamp(self) -> float:
        """When the last checkpoint was signed (seconds since the epoch; 0 if none)."""
        if self.last is None:
            return 0.0
        return datetime.fromisoformat(self.last.event.at).timestamp()


def checkpoint_update(checkpoint: Checkpointed) -> CheckpointUpdate:
    """What the sinks publish of a checkpoint journaled."""
    return CheckpointUpdate(checkpoint.event.at, checkpoint.row, checkpoint.event)


def resume_checkpoints(
    journal: LedgerJournal,
    schedule: CheckpointSchedule,
    at: str,
    check: StateCheck | None = None,
    high_water: SignedHead | None = None,
) -> CheckpointSchedule:
    """The start-up check (see the module docstring); raises :class:`StoredStateError`.

    ``check``: the check already run on this journal, which has followed every row since (a
    warm standby's: controller/service/standby.py); else it runs now. ``high_water``: the
    controller's last signed head (:mod:`.heads`), which the journal must still hold.
    """
    if check is None:
        check = journal.check_state(as_controller_key(schedule.key), high_water)
    for note in check.said():
        log.warning("start-up check: %s", note)
    if not check.ok:
        detail = "; ".join(check.problems)
        fault = FaultRecorded(
            f"fault-{uuid.uuid4()}", at, "start-up check", "stored-state", detail[:DETAIL_MAX]
        )
        journal.append(fault)
        journal.close()
        shown = "; ".join(check.problems[:SHOWN])
        more = len(check.problems) - SHOWN
        shown += f"; and {more} more (the fault journaled lists them)" if more > 0 else ""
        raise StoredStateError(
            f"{journal.path}: the stored state is not what the journal gives, refusing to "
            f"start: {shown}"
        )
    since = f"checkpoint at row {check.checkpoint.row}" if check.checkpoint else "the first row"
    log.info(
        "start-up check: the stored state is the journal's (%d rows replayed from %s)",
        check.replayed, since,
    )  # fmt: skip
    schedule.resume(check.checkpoint)
    if schedule.rows_behind(journal.head[0]) > 0:  # rows came after the last checkpoint
        sealed = schedule.seal(journal, at)
        receipt = journal.append_many([sealed.event], snapshot=sealed)[0]
        schedule.recorded(receipt.seq, sealed.event)
    return schedule
