"""The daemon's side of the signer process: :class:`RemoteSigner`, a :class:`Signer` on a socket.

``[controller] signer_socket`` names the signer process's Unix socket (controller/service/
signer_server.py; docs/operations.md, "The signer"). The daemon then never holds the key: each
signature is one framed request and its answer, on one connection kept open and opened again
when it breaks, each wait bounded (:data:`~controller.security.signer.TIMEOUT_S`).

``sign(data)`` takes the same bytes a key in the process would sign and sends the statement they
hold: the domain at their start says its kind, the canonical JSON after it its fields, which the
signer rebuilds the bytes from. Bytes of no known kind are refused here, before anything is sent.

**Off the event loop.** A signer stalled (stopped, swapped out, its disk hung) must not stall
the daemon: ``sign_async`` is the same request on an asyncio stream of its own, awaited, so
that only what waits for the signature waits (the sink's meters and hits, drivers/mqtt/
signing.py), bounded by the same timeout; its connection is dropped after a timeout or a
cancellation, so that a late answer is never read as the next one's. ``sign`` stays for the
code that signs in the middle of building a statement (a head, a checkpoint): start-up, the
command line, and the sequencer, which calls it on a worker thread (controller/runtime/
sequencer.py says why); a lock keeps one request at a time on its socket.

A refusal (the journal went back below the signer's mark) is :class:`SignerRefusedError`; for a
head it is a :class:`~controller.journal.high_water.HighWaterError` as well, which the
sequencer answers by failing closed and ending the process (controller/runtime/step_down.py),
and start-up by refusing to start. A signer that cannot be reached, or does not answer in time,
is :class:`SignerUnavailableError` (a ``ConnectionError``): the sequencer tries a head again at
the next commit; at start-up the daemon stops with one line.

**The mystery keeper.** The signer holds the mystery levels' sealed triggers too, and a
``RemoteSigner`` is a :class:`~controller.mystery.keeper.Keeper`: :meth:`RemoteSigner.draw`
asks for a level's draw (the statement comes back signed, and is checked against the request
and the key here), :meth:`RemoteSigner.check` whether a contribution's meter reaches the
trigger (``draw_async`` and ``check_async`` are the same on the event loop). Every verdict is
checked against the daemon's own meter (:func:`~controller.mystery.keeper.probed`): a signer
that was asked about a meter the daemon never asked, spent the draw at a meter the daemon did
not ask at, refuses a query as below one asked already, or made the draw with another range,
raises :class:`~controller.mystery.keeper.MysteryAlarmError`: someone else is asking the
keeper, and the level must stop (docs/security.md, "Mystery levels: the sealed
trigger").
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import TYPE_CHECKING, Final, TypeVar

import msgspec

from controller.journal import checkpoints, high_water
from controller.journal.high_water import HighWaterError
from controller.meter_signature import HIT_DOMAIN, METER_DOMAIN, POOL_STATUS_DOMAIN
from controller.mystery.core import (
    Drawn,
    DrawRequest,
    Meter,
    MysteryRefusedError,
    drawn_signature_holds,
)
from controller.mystery.envelope import Envelope
from controller.mystery.keeper import Adoption, MysteryAlarmError, Query, Verdict, probed
from controller.security.controller_key import key_id
from controller.security.signer import (
    LENGTH,
    TIMEOUT_S,
    Answer,
    Kind,
    Request,
    SignerRefusedError,
    SignerUnavailableError,
    frame,
    frame_length,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

T = TypeVar("T")

KINDS: Final[tuple[tuple[bytes, Kind], ...]] = (
    (high_water.DOMAIN, "head"),
    (checkpoints.DOMAIN, "checkpoint"),
    (METER_DOMAIN, "meter"),
    (POOL_STATUS_DOMAIN, "pool-status"),
    (HIT_DOMAIN, "hit"),
)
"""The statements the signer signs, by the domain their bytes start with."""


class HeadRefusedError(SignerRefusedError, HighWaterError):
    """The signer refused a head or a checkpoint: the journal is below the signer's mark."""


class RemoteSigner:
    """The controller key's signatures, from the signer process on ``path``."""

    def __init__(self, path: Path, *, timeout_s: float = TIMEOUT_S) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._connection: socket.socket | None = None
        self._lock = threading.Lock()
        """One request at a time on the blocking socket (the sequencer's worker thread)."""
        self._stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._stream_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        answer = self._ask(Request(1, "key"))
        self._public_key = answer.public_key
        self._key_id = key_id(answer.public_key)

    @property
    def key_id(self) -> str:
        """The signer's key id."""
        return self._key_id

    @property
    def public_key(self) -> str:
        """The signer's public key."""
        return self._public_key

    def sign(self, data: bytes) -> str:
        """The signer's signature of the statement ``data`` holds (see the module docstring).

        It blocks until the answer (at most ``timeout_s``, twice if a kept connection broke):
        not for the event loop's thread (:meth:`sign_async` is).
        """
        kind, request = _request(data)
        answer = self._ask(request)
        if not answer.ok:
            self.close()  # the signer closes a connection it refused on
        return self._signature(kind, answer)

    async def sign_async(self, data: bytes) -> str:
        """:meth:`sign` awaited on an asyncio stream: a stalled signer never blocks the loop.

        Bounded by ``timeout_s`` for the whole request (the wait for another request ahead of
        it included); then :class:`SignerUnavailableError`, the connection dropped.
        """
        kind, request = _request(data)
        return self._signature(kind, await self._ask_async(request))

    def draw(self, request: DrawRequest) -> Drawn:
        """The signer's draw ``request.draw`` of a mystery level (blocking; see :meth:`sign`)."""
        return self._drawn(
            request,
            self._refused(blocking=True, answer=self._ask(_mystery("mystery-draw", request))),
        )

    async def draw_async(self, request: DrawRequest) -> Drawn:
        """:meth:`draw` awaited on the event loop."""
        answer = await self._ask_async(_mystery("mystery-draw", request))
        return self._drawn(request, self._refused(blocking=False, answer=answer))

    def check(self, query: Query, since: Meter | None) -> Verdict:
        """The signer's verdict on ``query`` (blocking), checked against ``since``.

        ``since``: the daemon's meter of this draw before this contribution (None: the first
        contribution since the draw). :class:`MysteryAlarmError` if the signer's view is ahead.
        """
        return _verdict(
            query,
            since,
            self._refused(blocking=True, answer=self._ask(_mystery("mystery-check", query))),
        )

    async def check_async(self, query: Query, since: Meter | None) -> Verdict:
        """:meth:`check` awaited on the event loop."""
        answer = await self._ask_async(_mystery("mystery-check", query))
        return _verdict(query, since, self._refused(blocking=False, answer=answer))

    def envelope(self, drawn: Drawn) -> Envelope | None:
        """The signer's draw ``drawn`` sealed for the cluster's keepers (blocking).

        None: the signer holds no sealing key (controller/mystery/envelope.py).
        """
        request = _mystery("mystery-envelope", drawn)
        return _envelope(self._refused(blocking=True, answer=self._ask(request)))

    async def envelope_async(self, drawn: Drawn) -> Envelope | None:
        """:meth:`envelope` awaited on the event loop."""
        answer = await self._ask_async(_mystery("mystery-envelope", drawn))
        return _envelope(self._refused(blocking=False, answer=answer))

    def adopt(self, drawn: Drawn, envelope: Envelope, since: Meter | None) -> None:
        """The signer takes another node's draw from its envelope (blocking)."""
        request = _mystery("mystery-adopt", Adoption(drawn, envelope, since))
        self._refused(blocking=True, answer=self._ask(request))

    async def adopt_async(self, drawn: Drawn, envelope: Envelope, since: Meter | None) -> None:
        """:meth:`adopt` awaited on the event loop."""
        answer = await self._ask_async(_mystery("mystery-adopt", Adoption(drawn, envelope, since)))
        self._refused(blocking=False, answer=answer)

    def _refused(self, *, blocking: bool, answer: Answer) -> Answer:
        """A mystery answer, or its refusal raised (an alarm if the signer is ahead)."""
        if answer.ok:
            return answer
        if blocking:
            self.close()  # the signer closes a connection it refused on (the stream's: dropped)
        if answer.ahead:
            raise MysteryAlarmError(
                f"{self.path}: the signer is ahead of the daemon: {answer.reason}"
            )
        raise MysteryRefusedError(f"{self.path}: the signer refused: {answer.reason}")

    def _drawn(self, request: DrawRequest, answer: Answer) -> Drawn:
        drawn = _decoded(answer, Drawn)
        if drawn.key != request.key or (drawn.floor, drawn.ceiling) != (
            request.floor,
            request.ceiling,
        ):
            raise MysteryRefusedError(f"{self.path}: the signer answered another draw")
        reason = drawn_signature_holds(drawn, [self.public_key])
        if reason is not None:
            raise MysteryRefusedError(f"{self.path}: {reason}")
        return drawn

    async def _ask_async(self, request: Request) -> Answer:
        """One request and its answer on the event loop (see :meth:`sign_async`)."""
        message = frame(request)
        try:
            async with asyncio.timeout(self.timeout_s), self._async_lock():
                answer = await self._exchange_async(message)
        except TimeoutError as error:
            await self._drop_stream()
            raise SignerUnavailableError(
                f"{self.path}: the signer did not answer within {self.timeout_s:g} s"
            ) from error
        except (OSError, asyncio.IncompleteReadError) as error:
            await self._drop_stream()
            raise SignerUnavailableError(
                f"{self.path}: the signer cannot be reached: {error}"
            ) from error
        except BaseException:  # cancelled mid-request: its answer must not be read as the next
            await self._drop_stream()
            raise
        if not answer.ok:
            await self._drop_stream()
        return answer

    def _signature(self, kind: Kind, answer: Answer) -> str:
        if kind in {"head", "checkpoint"} and not answer.ok:
            raise HeadRefusedError(f"{self.path}: the signer refused: {answer.reason}")
        if not answer.ok:
            raise SignerRefusedError(f"{self.path}: the signer refused: {answer.reason}")
        return answer.signature

    def close(self) -> None:
        """Close the blocking connection (the next request opens another)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def aclose(self) -> None:
        """Close both connections."""
        self.close()
        await self._drop_stream()

    def _async_lock(self) -> asyncio.Lock:
        """One request at a time on the stream; a lock (and a stream) per event loop."""
        loop = asyncio.get_running_loop()
        if self._stream_lock is None or self._stream_lock[0] is not loop:
            self._stream_lock = (loop, asyncio.Lock())
            self._stream = None  # a stream of another loop (a test's earlier run) is not ours
        return self._stream_lock[1]

    async def _exchange_async(self, message: bytes) -> Answer:
        for attempt in (1, 2):
            fresh = self._stream is None
            if self._stream is None:
                self._stream = await asyncio.open_unix_connection(str(self.path))
            reader, writer = self._stream
            try:
                writer.write(message)
                await writer.drain()
                header = await reader.readexactly(LENGTH.size)
                body = await reader.readexactly(frame_length(header))
            except (OSError, asyncio.IncompleteReadError):
                await self._drop_stream()
                if fresh or attempt == 2:
                    raise
                continue  # a kept connection the signer closed (it restarted): once more
            return _answer(body)
        raise AssertionError  # pragma: no cover - the loop returns or raises

    async def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream[1].close()
            with contextlib.suppress(OSError):
                await stream[1].wait_closed()

    def _ask(self, request: Request) -> Answer:
        """One request and its answer; a broken kept connection is opened again, once."""
        message = frame(request)
        with self._lock:
            for attempt in (1, 2):
                fresh = self._connection is None
                try:
                    return self._exchange(message)
                except OSError as error:
                    self.close()
                    if fresh or attempt == 2:
                        raise SignerUnavailableError(
                            f"{self.path}: the signer cannot be reached: {error}"
                        ) from error
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def _exchange(self, message: bytes) -> Answer:
        if self._connection is None:
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.settimeout(self.timeout_s)
            try:
                connection.connect(str(self.path))
            except OSError:
                connection.close()
                raise
            self._connection = connection
        self._connection.sendall(message)
        return _answer(self._read(frame_length(self._read(LENGTH.size))))

    def _read(self, size: int) -> bytes:
        connection = self._connection
        if connection is None:  # pragma: no cover - _exchange connects first
            raise ConnectionError("not connected")
        chunks = bytearray()
        while len(chunks) < size:
            chunk = connection.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("the signer closed the connection")
            chunks += chunk
        return bytes(chunks)


def _request(data: bytes) -> tuple[Kind, Request]:
    """The request for the statement ``data`` holds; refused here if it is of no known kind."""
    for domain, kind in KINDS:
        if data.startswith(domain):
            try:
                fields = msgspec.json.decode(data[len(domain) :], type=dict[str, msgspec.Raw])
            except msgspec.MsgspecError as error:
                raise SignerRefusedError(f"a {kind} statement that is not JSON") from error
            return kind, Request(1, kind, fields)
    raise SignerRefusedError(
        "not a statement the signer signs (a head, a checkpoint, a meter, a hit)"
    )


def _mystery(kind: Kind, statement: DrawRequest | Query | Drawn | Adoption) -> Request:
    """The request of a mystery draw or query."""
    fields = msgspec.json.decode(msgspec.json.encode(statement), type=dict[str, msgspec.Raw])
    return Request(1, kind, fields)


def _decoded(answer: Answer, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(answer.result, type=kind)
    except msgspec.MsgspecError as error:
        raise MysteryRefusedError(f"a mystery answer that is not the signer's: {error}") from error


def _envelope(answer: Answer) -> Envelope | None:
    try:
        return msgspec.json.decode(answer.result, type=Envelope | None)
    except msgspec.MsgspecError as error:
        raise MysteryRefusedError(f"a mystery answer that is not the signer's: {error}") from error


def _verdict(query: Query, since: Meter | None, answer: Answer) -> Verdict:
    """The verdict in ``answer``, checked: of the draw asked, and nobody else asking."""
    verdict = _decoded(answer, Verdict)
    if verdict.draw != query.draw:
        raise MysteryRefusedError(f"the signer answered draw {verdict.draw}, not {query.draw}")
    reason = probed(verdict, query.meter, since)
    if reason is not None:
        raise MysteryAlarmError(reason)
    return verdict


def _answer(body: bytes) -> Answer:
    try:
        return msgspec.json.decode(body, type=Answer)
    except msgspec.MsgspecError as error:
        raise ConnectionError(f"an answer that is not the signer's: {error}") from error


async def off_the_loop(key: object, call: Callable[[], T]) -> T:
    """``call()``, which signs with ``key``: on a worker thread if the signer process holds it.

    A head and a checkpoint are signed in the middle of the pure code that builds them
    (controller/journal/high_water.py, checkpoints.py), which cannot await; through the signer
    process that is a blocking request of up to :data:`~controller.security.signer.TIMEOUT_S`,
    which on the event loop would stall every source, the web port and the sinks while a
    signer is stalled. So that one blocking call leaves the loop (the one place threads and
    asyncio meet for signing): the caller, the sequencer, holds its writing lock meanwhile, so
    nothing it reads moves. A key in the process signs in tens of microseconds, in place.
    """
    if not isinstance(key, RemoteSigner):
        return call()
    return await asyncio.to_thread(call)
