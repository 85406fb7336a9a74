"""The signer process: the controller key held by its own user, signing known statements only.

``jackpotd signer`` (controller/cli/signer.py) runs :func:`serve_signer`: a Unix socket (mode
0660: its owner and its group, the service's, connect) on which each request is one framed JSON
:class:`~controller.security.signer.Request` (controller/security/signer.py). It signs only
statements of a known kind, each rebuilt here from its fields with the very function that says
what the daemon signs, so that no other bytes are ever signed (it is not a signing oracle):

* ``head``: a signed head (controller/journal/high_water.py), and ``checkpoint``: a checkpoint's
  statement (controller/journal/checkpoints.py). Each is judged against the signer's own mark of
  its controller (:func:`~controller.security.signer.judge`): below the mark, at its row with
  another hash, or of another journal, it is refused. The mark is raised and written to the
  state file, durably, *before* the signature is answered: a signer that crashes after
  answering still remembers the row;
* ``meter`` and ``pool-status``: a meter or pool status the daemon publishes
  (controller/meter_signature.py). They state no history, so no mark applies; the service user
  decides what the meters say anyway;
* ``hit``: a hit the daemon announces to the signs, likewise without a mark; it names the
  controller announcing it, which must be one this signer serves;
* ``key``: the public key, so that the daemon knows the key id it signs under;
* ``mystery-draw`` and ``mystery-check``: the signer keeps the mystery levels' sealed triggers
  (controller/mystery/keeper.py). A draw names a controller it serves and its key id; the
  trigger is drawn here, committed to, and the draw statement signed; the trigger and nonce
  are written to the sealed draws' file (``mystery.json`` beside the marks, 0600,
  controller/mystery/store.py) before the statement is answered. A check is answered "not
  yet" or with the reveal, under the keeper's rules (a meter below the last asked is refused,
  one that reaches the trigger spends the draw). No refusal and no log line names a trigger;
* ``mystery-envelope`` and ``mystery-adopt``: with ``--sealing-key`` (the cluster's keepers'
  shared secret, controller/security/sealing_key.py), the signer seals the draw it holds for the
  journal (controller/mystery/envelope.py), and takes another node's draw from its envelope
  after a failover, its trigger checked against the draw's commitment before it is kept.

Every statement must name a controller the signer serves (``--controller``) and the signer's
own key id. Anything else (another kind, an unknown field, a frame too long or malformed) is
answered with a refusal, logged, and the connection is closed; the signer carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.events import CheckpointRecorded
from controller.files import SECRET
from controller.journal import checkpoints, high_water
from controller.meter_signature import HIT_DOMAIN, KEY_ID, METER_DOMAIN, POOL_STATUS_DOMAIN
from controller.meter_signature import signed_bytes as meter_bytes
from controller.mystery.core import Drawn, DrawRequest, MysteryInputError, MysteryRefusedError
from controller.mystery.keeper import Adoption, KeeperAheadError, Query, Vault
from controller.mystery.store import SealedFile
from controller.outputs import SignedHead
from controller.security.signer import (
    Answer,
    Mark,
    Request,
    SignerRefusedError,
    frame,
    frame_length,
    judge,
    raised,
)

if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path

    from controller.mystery.envelope import SealingKey
    from controller.security.controller_key import ControllerKey

log = logging.getLogger(__name__)

SOCKET_MODE: Final = 0o660
"""The socket: the signer's user and its group (the service's) connect, nobody else."""
READ_TIMEOUT_S: Final = 30.0
"""A connection that sends nothing for this long is closed."""

_MARKS: Final = msgspec.json.Decoder(dict[str, Mark])
_PUBLISHED: Final[dict[str, bytes]] = {
    "meter": METER_DOMAIN,
    "pool-status": POOL_STATUS_DOMAIN,
    "hit": HIT_DOMAIN,
}
"""The domain of each kind the daemon publishes (controller/meter_signature.py)."""


def sealed_path(state: Path) -> Path:
    """Where the sealed draws are kept by default: ``mystery.json`` beside the marks."""
    return state.with_name("mystery.json")


class CheckpointStatement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The fields of a checkpoint that are signed (controller/journal/checkpoints.py)."""

    controller: str
    head_seq: int
    head_hash: str
    state_digest: str
    meters: dict[str, int]
    key_id: str
    at: str


class SignerState:
    """The signer's marks, per controller id, kept in a file only the signer writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.marks = self._read()

    def _read(self) -> dict[str, Mark]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            return _MARKS.decode(data)
        except msgspec.MsgspecError as error:
            raise SignerRefusedError(f"{self.path}: not a signer state file: {error}") from error

    def keep(self, controller: str, mark: Mark) -> None:
        """Raise ``controller``'s mark: replaced atomically and flushed before returning."""
        if self.marks.get(controller) == mark:
            return
        marks = {**self.marks, controller: mark}
        staged = self.path.with_name(f".{self.path.name}.new")
        descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, SECRET)
        try:
            os.fchmod(descriptor, SECRET)
            os.write(descriptor, msgspec.json.encode(marks))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        staged.replace(self.path)
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        self.marks = marks


class Desk:
    """What the signer decides about each request (no socket: the tests drive it directly)."""

    def __init__(
        self,
        key: ControllerKey,
        state: SignerState,
        controllers: Collection[str],
        sealed: Path | None = None,
        sealing: SealingKey | None = None,
    ) -> None:
        self.key = key
        self.state = state
        self.controllers = frozenset(controllers)
        self.vault = Vault(SealedFile(sealed or sealed_path(state.path)), sealing)
        """The mystery levels' sealed draws (``sealed``, else beside the marks), and the
        cluster's sealing key (``sealing``) that hands them from node to node."""

    def answer(self, request: Request) -> Answer:
        """The answer to ``request``: a signature, the public key, or a refusal."""
        if request.v != 1:
            raise SignerRefusedError(f"request version {request.v} (this signer reads 1)")
        if request.kind == "key":
            return Answer(ok=True, public_key=self.key.public_key)
        fields = request.statement
        if fields is None:
            raise SignerRefusedError(f"a {request.kind} request without its statement")
        raw = msgspec.json.encode(fields)
        if request.kind == "head":
            return self._head(msgspec.json.decode(raw, type=SignedHead))
        if request.kind == "checkpoint":
            return self._checkpoint(msgspec.json.decode(raw, type=CheckpointStatement))
        if request.kind == "mystery-draw":
            draw = msgspec.json.decode(raw, type=DrawRequest)
            self._ours(draw.controller, draw.key_id)
            drawn = self.vault.draw(draw, self.key.sign)
            return Answer(ok=True, result=msgspec.Raw(msgspec.json.encode(drawn)))
        if request.kind == "mystery-check":
            query = msgspec.json.decode(raw, type=Query)
            self._ours(query.controller, self.key.key_id)
            verdict = self.vault.check(query)
            return Answer(ok=True, result=msgspec.Raw(msgspec.json.encode(verdict)))
        if request.kind == "mystery-envelope":
            drawn = msgspec.json.decode(raw, type=Drawn)
            self._ours(drawn.controller, drawn.key_id)
            envelope = self.vault.envelope(drawn)
            return Answer(ok=True, result=msgspec.Raw(msgspec.json.encode(envelope)))
        if request.kind == "mystery-adopt":
            adoption = msgspec.json.decode(raw, type=Adoption)
            self._ours(adoption.drawn.controller, self.key.key_id)
            self.vault.adopt(adoption.drawn, adoption.envelope, adoption.since)
            return Answer(ok=True)
        domain = _PUBLISHED[request.kind]
        published = msgspec.json.decode(raw, type=dict[str, Any])
        controller = str(published.get("controller", ""))
        self._ours(controller, published.get(KEY_ID), meter=request.kind != "hit")
        return Answer(ok=True, signature=self.key.sign(meter_bytes(domain, published)))

    def _ours(self, controller: str, key: object, *, meter: bool = False) -> None:
        if key != self.key.key_id:
            raise SignerRefusedError(f"the statement names key {key}, not this signer's")
        if not meter and controller not in self.controllers:
            raise SignerRefusedError(f"controller {controller!r} is not one this signer serves")

    def _head(self, head: SignedHead) -> Answer:
        if head.signature:
            raise SignerRefusedError("a head to sign carries a signature already")
        self._ours(head.controller, head.key_id)
        self._judged(head.controller, head.journal, head.seq, head.hash, head.at)
        return Answer(ok=True, signature=self.key.sign(high_water.signed_bytes(head)))

    def _checkpoint(self, statement: CheckpointStatement) -> Answer:
        self._ours(statement.controller, statement.key_id)
        self._judged(statement.controller, None, statement.head_seq, statement.head_hash,
                     statement.at)  # fmt: skip
        event = CheckpointRecorded(
            "", statement.at, statement.controller, statement.head_seq, statement.head_hash,
            statement.state_digest, statement.meters, statement.key_id, "",
        )  # fmt: skip
        return Answer(ok=True, signature=self.key.sign(checkpoints.signed_bytes(event)))

    def _judged(self, controller: str, journal: str | None, seq: int, row: str, at: str) -> None:
        """Refuse below the mark; else raise it, durably, before anything is signed."""
        mark = self.state.marks.get(controller)
        reason = judge(mark, journal, seq, row)
        if reason is not None:
            raise SignerRefusedError(f"controller {controller}: {reason}")
        self.state.keep(controller, raised(mark, journal, seq, row, at))


async def _serve_connection(
    desk: Desk, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer one connection's requests in turn until it closes or sends something wrong."""
    try:
        while True:
            try:
                async with asyncio.timeout(READ_TIMEOUT_S):
                    header = await reader.readexactly(4)
                    body = await reader.readexactly(frame_length(header))
            except asyncio.IncompleteReadError:
                return  # the daemon closed the connection
            try:
                answer = desk.answer(msgspec.json.decode(body, type=Request))
            except (
                SignerRefusedError, MysteryRefusedError, MysteryInputError, msgspec.MsgspecError
            ) as error:  # fmt: skip
                log.warning("refused: %s", error)
                ahead = isinstance(error, KeeperAheadError)
                writer.write(frame(Answer(ok=False, reason=str(error), ahead=ahead)))
                await writer.drain()
                return
            writer.write(frame(answer))
            await writer.drain()
    except (SignerRefusedError, TimeoutError, OSError) as error:
        log.warning("a connection closed: %s", error)
    except asyncio.CancelledError:
        # The signer stopping with a client still connected. Ended here, not re-raised: the
        # stream's callback in Python 3.11 asks a cancelled task for its exception and logs
        # a traceback for each connection otherwise; the server is closing anyway.
        return
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def serve_signer(
    desk: Desk, socket_path: Path, stop: asyncio.Event, ready: asyncio.Event | None = None
) -> None:
    """Listen on ``socket_path`` (mode :data:`SOCKET_MODE`) until ``stop`` is set."""
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()  # one left by a signer that was killed
    old = os.umask(0o117)  # the socket is born 0660, never wider even for an instant
    try:
        server = await asyncio.start_unix_server(
            lambda reader, writer: _serve_connection(desk, reader, writer), path=socket_path
        )
    finally:
        os.umask(old)
    socket_path.chmod(SOCKET_MODE)
    log.info("signing with key %s on %s", desk.key.key_id, socket_path)
    async with server:
        if ready is not None:
            ready.set()
        await stop.wait()
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()
