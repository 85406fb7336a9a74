"""The console's door to the ledger: the operator socket, as the CLI reaches a running daemon.

Every signed action has one way in (docs/operations.md, "Signing as the operator"): the
operator socket (controller/service/operator_socket.py), with its size and form checks, its
window check against the controller's clock, its faults and its provenance. The console asks it
the same two requests the CLI's :class:`controller.cli.submit.SocketDesk` does, framed by the
same code (controller/runtime/operator_desk.py), on the event loop instead of a blocking
socket: ``state`` to draft and bind an action against, ``submit`` to journal it once signed.
So what the console relays is checked exactly as what an operator's command hands in, and the
journal says so (``operator-socket uid=... command=console verify-hit``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from controller.errors import InputError
from controller.events import encode_event
from controller.ledger.snapshot import state_from_text
from controller.runtime.operator_desk import (
    LENGTH,
    MAX_ANSWER,
    VERSION,
    OperatorAnswer,
    OperatorRequest,
    ReceiptFields,
    answer_of,
    frame,
)

if TYPE_CHECKING:
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState

TIMEOUT_S: Final = 30.0
"""How long the daemon may take to answer (a commit waits at most ``commit_hang_s``)."""


class DeskError(InputError):
    """The operator socket refused a request, or did not answer: the message says why."""


@dataclass(frozen=True, slots=True)
class DeskState:
    """What an action is drafted against: the ledger's state and the controller's clock."""

    state: LedgerState
    at: str


class ConsoleDesk:
    """The operator socket at ``path``, asked as the CLI asks it (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def state(self) -> DeskState:
        """The ledger's state as the daemon runs it, and the controller's time now."""
        answer = await self._exchange(OperatorRequest(VERSION, "state"))
        text = answer.state
        state = await asyncio.to_thread(state_from_text, text)
        return DeskState(state, answer.at)

    async def submit(self, event: AnyEvent, command: str) -> ReceiptFields:
        """Hand the signed ``event`` (made by the console's ``command``) in; its receipt."""
        body = msgspec.Raw(encode_event(event))
        receipt = (await self._exchange(OperatorRequest(VERSION, "submit", command, body))).receipt
        if receipt is None:
            raise DeskError("the controller answered without a receipt")
        return receipt

    async def _exchange(self, request: OperatorRequest) -> OperatorAnswer:
        try:
            async with asyncio.timeout(TIMEOUT_S):
                reader, writer = await asyncio.open_unix_connection(self.path)
                try:
                    writer.write(frame(request))
                    await writer.drain()
                    (length,) = LENGTH.unpack(await reader.readexactly(LENGTH.size))
                    if length > MAX_ANSWER:
                        raise DeskError(f"an answer of {length:,} bytes from the controller")
                    answer = answer_of(await reader.readexactly(length))
                finally:
                    writer.close()
        except TimeoutError as error:
            raise DeskError(f"the controller did not answer within {TIMEOUT_S:g} s") from error
        except (OSError, asyncio.IncompleteReadError) as error:
            raise DeskError(f"the controller's operator socket: {error}") from error
        if not answer.ok:
            raise DeskError(f"the controller refused it: {answer.reason}")
        return answer
