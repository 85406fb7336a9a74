"""The daemon's side of the signer process: :class:`RemoteSigner`, a :class:`Signer` on a socket.

``[controller] signer_socket`` names the signer process's Unix socket (controller/service/
signer_server.py; docs/operations.md, "The signer"). The daemon then never holds the key: each
signature is one framed request and its answer, on one connection kept open and opened again
when it breaks, each wait bounded (:data:`~controller.security.signer.TIMEOUT_S`).

``sign(data)`` takes the same bytes a key in the process would sign and sends the statement they
hold: the domain at their start says its kind, the canonical JSON after it its fields, which the
signer rebuilds the bytes from. Bytes of no known kind are refused here, before anything is sent.

A refusal (the journal went back below the signer's mark) is :class:`SignerRefusedError`; for a
head it is a :class:`~controller.journal.high_water.HighWaterError` as well, which the
sequencer answers by failing closed and ending the process (controller/runtime/step_down.py),
and start-up by refusing to start. A signer that cannot be reached, or does not answer in time,
is :class:`SignerUnavailableError` (a ``ConnectionError``): the sequencer tries a head again at
the next commit; at start-up the daemon stops with one line.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Final

import msgspec

from controller.journal import checkpoints, high_water
from controller.journal.high_water import HighWaterError
from controller.meter_signature import HIT_DOMAIN, METER_DOMAIN, POOL_STATUS_DOMAIN
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
    from pathlib import Path

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
        """The signer's signature of the statement ``data`` holds (see the module docstring)."""
        for domain, kind in KINDS:
            if data.startswith(domain):
                try:
                    fields = msgspec.json.decode(data[len(domain) :], type=dict[str, msgspec.Raw])
                except msgspec.MsgspecError as error:
                    raise SignerRefusedError(f"a {kind} statement that is not JSON") from error
                answer = self._ask(Request(1, kind, fields))
                if not answer.ok:
                    self.close()  # the signer closes a connection it refused on
                if kind in {"head", "checkpoint"} and not answer.ok:
                    raise HeadRefusedError(f"{self.path}: the signer refused: {answer.reason}")
                if not answer.ok:
                    raise SignerRefusedError(f"{self.path}: the signer refused: {answer.reason}")
                return answer.signature
        raise SignerRefusedError(
            "not a statement the signer signs (a head, a checkpoint, a meter, a hit)"
        )

    def close(self) -> None:
        """Close the connection (the next request opens another)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _ask(self, request: Request) -> Answer:
        """One request and its answer; a broken kept connection is opened again, once."""
        message = frame(request)
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
        body = self._read(frame_length(self._read(LENGTH.size)))
        try:
            return msgspec.json.decode(body, type=Answer)
        except msgspec.MsgspecError as error:
            raise ConnectionError(f"an answer that is not the signer's: {error}") from error

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
