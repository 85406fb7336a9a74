"""The console's rig: the daemon with its operator socket, and a supervisor's tablet.

bench/console.py drives these. :class:`ConsoleController` is bench/sides.py's controller
side with ``[controller] operator_socket`` configured, so that the display server serves the
console, and a second operator, a supervisor, added with the command line as the manager was.
:class:`Tablet` is the page's client: it enrolls each operator's passkey at the console (the
manager's key file signing the enrollment through the operator socket), signs the meter
correction that can be repeated without end, and polls as the page polls. The passkeys are the
tests' software authenticators (tests/support/web/authenticator.py), so every action is really
signed and checked by the ledger.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from common import KEY_FILE
from service import MANAGER, PASSPHRASE, Daemon, approve_site
from sides import Controller

from controller.cli import main as jackpotd
from controller.cli.submit import SocketDesk
from controller.events import decode_event
from controller.ledger.binding import signed_by
from controller.security.keys import open_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.web.authenticator import Authenticator  # the tests' software passkey

if TYPE_CHECKING:
    import aiohttp

SUPERVISOR: Final = "bench-sup"
SOCKET: Final = "operator.sock"
POOL: Final = "p1"
REASON: Final = "benchmark: a cent to the reserve and back"


class ConsoleController(Controller):
    """bench/sides.py's controller, with its operator socket and so its console."""

    def readied(self, config: Path) -> Daemon:
        """The console's socket configured, the site approved, the supervisor added."""
        text = config.read_text().replace(
            f'key_file = "{KEY_FILE}"\n', f'key_file = "{KEY_FILE}"\noperator_socket = "{SOCKET}"\n'
        )
        config.write_text(text)
        approve_site(config)
        folder = config.parent
        passphrase = str(folder / f"{MANAGER}.passphrase")
        key = str(folder / f"{SUPERVISOR}.key")
        signed = ["--key", str(folder / f"{MANAGER}.key"), "--passphrase-file", passphrase]
        for command in (
            ["operator", "key", SUPERVISOR, "--out", key, "--passphrase-file", passphrase],
            ["operator", "add", SUPERVISOR, "--role", "supervisor", "--public-key", key, *signed,
             "--db", str(self.journal)],
        ):  # fmt: skip
            log = config.with_suffix(".operator.log")
            with log.open("a", encoding="utf-8") as output, contextlib.redirect_stdout(output):
                status = jackpotd(command)
            if status != 0:
                raise RuntimeError(f"jackpotd {' '.join(command[:2])} failed")
        daemon = Daemon(config)
        daemon.approved = True
        return daemon

    @property
    def base(self) -> str:
        """The display server's address."""
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def origin(self) -> str:
        """The console's origin on a localhost bind (controller/config/web_section.py)."""
        return f"http://localhost:{self.web_port}"


@dataclass
class Tablet:
    """The console's client: the page's requests, the passkeys of both signers."""

    base: str
    origin: str
    passkeys: dict[str, Authenticator] = field(default_factory=dict)
    sign: int = 1

    async def post(
        self, session: aiohttp.ClientSession, path: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """One of the page's requests: its JSON answer (a refusal raises)."""
        headers = {"Origin": self.origin}
        async with session.post(self.base + path, json=body, headers=headers) as response:
            response.raise_for_status()
            answer: dict[str, Any] = await response.json()
        if answer.get("status") == "refused":
            raise RuntimeError(f"{path}: refused: {answer.get('reason')}")
        return answer

    async def enroll(self, session: aiohttp.ClientSession, operator: str, socket: Path) -> None:
        """``operator``'s passkey registered at the page; the manager's key file signs it."""
        passkey = Authenticator()
        body = {"operator": operator, "label": f"{operator}'s tablet", "by": MANAGER}
        draft = await self.post(session, "/console/api/enroll", body)
        challenge = hashlib.sha256(base64.b64decode(draft["bytes"])).digest()
        made = passkey.register(challenge, rp_id="localhost", origin=self.origin)
        await self.post(
            session, "/console/api/register",
            {"draft": draft["draft"], "credential_id": made.credential_id,
             "attestation_object": made.attestation_object,
             "client_data_json": made.client_data_json},
        )  # fmt: skip
        async with session.get(f"{self.base}/console/api/drafts/{draft['draft']}") as response:
            event = await response.read()
        await asyncio.to_thread(_manager_signs, socket, event)
        self.passkeys[operator] = passkey

    async def action(self, session: aiohttp.ClientSession) -> None:
        """One signed meter correction: a draft, two assertions (three requests)."""
        body = {"action": "adjust", "pool_id": POOL, "account": "reserve",
                "amount_cents": self.sign, "by": MANAGER, "reason": REASON}  # fmt: skip
        draft = await self.post(session, "/console/api/draft", body)
        challenge = hashlib.sha256(base64.b64decode(draft["bytes"])).digest()
        answer: dict[str, Any] = {}
        for operator in (MANAGER, SUPERVISOR):
            assertion, signature = self.passkeys[operator].assertion(
                challenge, rp_id="localhost", origin=self.origin
            )
            answer = await self.post(
                session, "/console/api/sign",
                {"draft": draft["draft"], "credential_id": assertion.credential_id,
                 "authenticator_data": assertion.authenticator_data,
                 "client_data_json": assertion.client_data_json, "signature": signature},
            )  # fmt: skip
        if answer.get("status") != "applied":
            raise RuntimeError(f"the correction was not applied: {answer}")
        self.sign = -self.sign

    async def poll(self, session: aiohttp.ClientSession, path: str = "/console/api/state") -> None:
        """One of the page's polls (or the page itself)."""
        async with session.get(self.base + path) as response:
            response.raise_for_status()
            await response.read()


def _manager_signs(socket: Path, body: bytes) -> None:
    """The manager's key file signs the drafted enrollment and hands it in (the CLI's path)."""
    folder = socket.parent
    _, key = open_key(folder / f"{MANAGER}.key", PASSPHRASE)
    desk = SocketDesk(socket)
    event = signed_by(desk.state, decode_event(body), [(MANAGER, key)])
    receipt = desk.submit(event, "passkey enroll")
    if receipt.outcome != "applied":
        raise RuntimeError(f"the enrollment was refused: {receipt.reason}")
