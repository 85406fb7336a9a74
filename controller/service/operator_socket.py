"""The daemon's operator socket: operators' signed actions in, receipts out.

``[controller] operator_socket`` names a Unix socket (mode 0660, group ``operator_group``) on
which the running daemon answers the two requests of :mod:`controller.runtime.operator_desk`:
``state`` (what an operator signs against: the ledger's state, its head, the controller's
clock) and ``submit`` (journal this signed event, through the sequencer, and say what became
of it). An operator runs the signing commands with their own account and key file; the service
user never reads the key, and the ledger checks every signature as on any other path
(docs/operations.md, "Signing as the operator").

Hostile input is bounded: a request of at most :data:`~controller.runtime.operator_desk.
MAX_REQUEST` bytes, sent whole within :data:`READ_TIMEOUT_S`; one request a connection; at
most :data:`MAX_CONNECTIONS` connections served at once, any more answered "busy" and closed.
Each refusal is answered in words, counted (``jackpotd_rejected_inputs_total{reason}``) and
journaled as a fault, a flood of them bounded per peer (controller/runtime/rejections.py);
nothing a client sends ends the daemon or moves a meter.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import logging
import os
import socket
import stat
import struct
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from controller.clock import utc_iso
from controller.errors import ConfigurationError
from controller.ledger.snapshot import snapshot_text
from controller.ports import ControllerUnavailableError
from controller.runtime.operator_desk import (
    BUSY,
    MAX_REQUEST,
    SOURCE,
    TIMEOUT,
    DeskRefusal,
    OperatorAnswer,
    OperatorRequest,
    ReceiptFields,
    action_of,
    body_length,
    expired,
    frame,
    provenance,
    request_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from controller.runtime.view import Runtime

log = logging.getLogger(__name__)

SOCKET_MODE: Final = 0o660
"""The service's user and the operators' group connect; nobody else."""
MAX_CONNECTIONS: Final = 16
"""Connections served at once; a request is small and a connection holds one."""
READ_TIMEOUT_S: Final = 5.0
"""A request must arrive whole within this (a passphrase is typed before connecting)."""
WRITE_TIMEOUT_S: Final = 10.0
"""An answer must be taken within this."""
_CREDENTIALS: Final = struct.Struct("3i")


class OperatorSocketError(ConfigurationError, OSError):
    """The socket cannot be made as configured (its folder, its group)."""


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The connecting process's uid (SO_PEERCRED), None where the system does not say."""
    sock = writer.get_extra_info("socket")
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None
    try:
        data = sock.getsockopt(socket.SOL_SOCKET, option, _CREDENTIALS.size)
    except OSError:
        return None
    return int(_CREDENTIALS.unpack(data)[1])


class OperatorSocket:
    """The socket's server for one running controller (see the module docstring)."""

    def __init__(
        self,
        runtime: Runtime,
        path: Path,
        group: str | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.runtime = runtime
        self.path = path
        self.group = group
        self.clock = clock
        self.active = 0
        self._server: asyncio.Server | None = None

    async def serve(self) -> None:
        """Serve what :meth:`listen` opened until cancelled; then :meth:`close`."""
        if self._server is None:
            raise OperatorSocketError(f"operator_socket {self.path}: not listening")
        log.info("taking operators' signed actions on %s", self.path)
        try:
            await asyncio.Future()  # until cancelled: the server serves on its own
        finally:
            self.close()

    def close(self) -> None:
        """Stop listening and remove the socket (nothing to do if it never listened)."""
        if self._server is None:
            return
        self._server.close()
        self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def listen(self) -> None:
        """Make the socket (before the daemon says it is ready: a failure stops the start)."""
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISSOCK(self.path.lstat().st_mode):
                raise OperatorSocketError(f"{self.path}: exists and is not a socket")
            self.path.unlink()  # one left by a daemon that was killed
        old = os.umask(0o117)  # born 0660 at most, never wider even for an instant
        try:
            server = await asyncio.start_unix_server(self._connection, path=self.path)
        except OSError as error:
            raise OperatorSocketError(
                f"operator_socket {self.path}: cannot listen: {error.strerror}"
            ) from error
        finally:
            os.umask(old)
        self._server = server
        try:
            self._own()
        except BaseException:
            self.close()
            raise

    def _own(self) -> None:
        """Mode 0660 and, if one is named, the operators' group (changed only if it differs)."""
        self.path.chmod(SOCKET_MODE)
        if self.group is None:
            return
        try:
            gid = grp.getgrnam(self.group).gr_gid
        except KeyError:
            raise OperatorSocketError(f"operator_group {self.group}: no such group") from None
        if self.path.stat().st_gid == gid:
            return  # a set-group-ID folder gave it (systemd/jackpotd.tmpfiles)
        try:
            os.chown(self.path, -1, gid)
        except OSError as error:
            raise OperatorSocketError(
                f"operator_socket {self.path}: cannot give it group {self.group} "
                f"({error.strerror}): the service's user must be a member of it"
            ) from error

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer)
        source = f"{SOURCE} uid={'unknown' if uid is None else uid}"
        try:
            if self.active >= MAX_CONNECTIONS:
                await self._refuse(writer, source, DeskRefusal(BUSY, "busy: try again"))
                return
            self.active += 1
            try:
                await self._serve_one(reader, writer, uid, source)
            finally:
                self.active -= 1
        except (OSError, TimeoutError) as error:
            log.info("operator connection from %s closed: %s", source, error)
        except asyncio.CancelledError:
            return  # the daemon stopping (a callback's cancellation ends here: see the signer)
        except Exception:  # a bug must never end the daemon: said, and the connection closed
            log.exception("operator connection from %s failed", source)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _serve_one(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        uid: int | None,
        source: str,
    ) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                header = await reader.readexactly(4)
                body = await reader.readexactly(body_length(header, MAX_REQUEST))
        except asyncio.IncompleteReadError:
            return  # the client went away
        except TimeoutError:
            await self._refuse(
                writer,
                source,
                DeskRefusal(TIMEOUT, f"no whole request within {READ_TIMEOUT_S:g} s"),
            )
            return
        except DeskRefusal as refusal:
            await self._refuse(writer, source, refusal)
            return
        try:
            request = request_of(body)
            answer = await self._answer(request, uid)
        except DeskRefusal as refusal:
            await self._refuse(writer, source, refusal)
            return
        await self._send(writer, answer)

    async def _answer(self, request: OperatorRequest, uid: int | None) -> OperatorAnswer:
        journal = self.runtime.journal
        if request.kind == "state":
            state, (seq, row) = journal.state, journal.head
            at = self.clock()
            text = await asyncio.to_thread(snapshot_text, state)  # immutable: off the loop
            return OperatorAnswer(ok=True, at=utc_iso(at), head_seq=seq, head_hash=row, state=text)
        event = action_of(request)
        expired(event, self.clock())
        try:
            receipt = await self.runtime.sequencer.submit(
                event, provenance=provenance(uid, request.command)
            )
        except ControllerUnavailableError as error:
            return OperatorAnswer(ok=False, reason=f"the controller is not journaling: {error}")
        fields = ReceiptFields(
            receipt.seq, receipt.event_id, receipt.outcome, receipt.reason,
            duplicate=receipt.duplicate, conflict=receipt.conflict,
        )  # fmt: skip
        return OperatorAnswer(ok=True, receipt=fields)

    async def _refuse(
        self, writer: asyncio.StreamWriter, source: str, refusal: DeskRefusal
    ) -> None:
        """Count and journal the refusal (a flood bounded per peer), then answer it."""
        await self.runtime.sequencer.rejections.reject(source, refusal.reason, refusal.message)
        with contextlib.suppress(OSError, TimeoutError):
            await self._send(writer, OperatorAnswer(ok=False, reason=refusal.message))

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, answer: OperatorAnswer) -> None:
        writer.write(frame(answer))
        async with asyncio.timeout(WRITE_TIMEOUT_S):
            await writer.drain()
