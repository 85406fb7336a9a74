"""The supervisors' console on a real daemon, in real headless Chromium with virtual passkeys.

:func:`console_floor` readies a signed journal (manager ``mgr``, supervisors ``sup1`` and
``sup2``, their Ed25519 keys in the returned :class:`~support.ledger.approvals.Site`), a table on a
pty line, an operator socket, a verification amount of $500 and dual control at $5,000, and pending
pays settled by hand: five aces on seat 1 (10 % of the meter, $1,000.05: one signature) and a
seven-card straight flush on seat 2 (the whole meter, $10,000: two). The daemon runs in-process
(tests/support/runtime/daemon.py), so the console reaches it through the real operator socket.

:func:`virtual_authenticator` gives a page a DevTools WebAuthn virtual authenticator (CTAP2,
internal transport, resident keys, user verification, the user verified), as the console's
end-to-end tests ask of Chromium. The page is opened on ``localhost``: a secure context
without TLS, and a host name a relying party id may be (an IP address may not).

:func:`enroll` is a manager enrolling an operator's passkey at the page, signing the drafted
enrollment with their key file through the operator socket (:func:`manager_signs`, the CLI's
path); :func:`ledger_facts` is what a refusal must leave as it was: every pool's meters and
the pending pays, as the journal's state holds them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

import aiohttp

from controller.cli.submit import SocketDesk
from controller.config.load import load_config
from controller.events import RoundSettled, WagerLocked, decode_event
from controller.ledger.binding import signed_by
from controller.ledger_journal.sqlite import Journal
from support.ledger.approvals import Site
from support.runtime.controller_keys import KEY_LINE
from support.runtime.floor import approved_site, free_port, write_config

if TYPE_CHECKING:
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from playwright.async_api import CDPSession, Page

    from controller.config.load import Config
    from controller.ledger.state import LedgerState

AT: Final = "2026-11-29T15:00:00Z"
DEALER: Final = {"1": ["3c", "4d", "6s", "8d", "Tc", "Qc", "7s"]}
FIVE_ACES: Final = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
SEVEN_CARD_FLUSH: Final = ["2h", "3h", "4h", "5h", "6h", "7h", "8h"]
ROUND = "T1/shoe-0c0501e0/1"
SINGLE: Final = f"{ROUND}/1/progressive"
"""Five aces: $1,000, one signature."""
DUAL: Final = f"{ROUND}/2/progressive"
"""A seven-card straight flush: the meter, two signatures."""
SECOND_ROUND = "T1/shoe-0c0501e0/2"
OTHER_SINGLE: Final = f"{SECOND_ROUND}/1/progressive"


def _settled(journal: Path, site: Site) -> None:
    """Rounds settled by hand (signed, as a supervisor may): the pending pays."""
    with Journal(journal) as opened:
        live = Site(opened, site.keys)
        for round_id, hands in (
            (ROUND, {"1": FIVE_ACES, "2": SEVEN_CARD_FLUSH}),
            (SECOND_ROUND, {"1": FIVE_ACES}),
        ):
            for seat in hands:
                wager = WagerLocked(
                    f"{round_id}/w{seat}", AT, "T1", round_id, int(seat), "progressive", 100
                )
                live.append(live.sign(wager, "sup1"))
            dealer = DEALER["1"]
            live.append(
                live.sign(RoundSettled(round_id, AT, "T1", round_id, dealer, hands), "sup1")
            )
        assert {SINGLE, DUAL, OTHER_SINGLE} <= set(opened.state.pending)


def console_floor(folder: Path, line: str) -> tuple[Config, dict[str, Ed25519PrivateKey]]:
    """The configuration and the operators' keys (the module docstring), T1 on pty ``line``."""
    config = write_config(folder, "console", {"T1": line}, free_port())
    lines = (
        f'{KEY_LINE}\noperator_socket = "operator.sock"\nverification_amount = "$500"\n'
        'dual_control_amount = "$5,000"\n'
    )
    config.write_text(config.read_text().replace(KEY_LINE, lines), "utf-8")
    site = approved_site(config)
    _settled(folder / "journal.db", site)
    return load_config(config), site.keys


def console_url(url: str) -> str:
    """The console on ``localhost`` (a secure context and a valid relying party id)."""
    return url.replace("127.0.0.1", "localhost").rstrip("/") + "/console/"


async def virtual_authenticator(page: Page) -> tuple[CDPSession, str]:
    """A DevTools WebAuthn virtual authenticator on ``page``: its session and id."""
    session = await page.context.new_cdp_session(page)
    await session.send("WebAuthn.enable", {"enableUI": False})
    options: dict[str, Any] = {
        "protocol": "ctap2",
        "transport": "internal",
        "hasResidentKey": True,
        "hasUserVerification": True,
        "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }
    added = await session.send("WebAuthn.addVirtualAuthenticator", {"options": options})
    return session, str(added["authenticatorId"])


def ledger_facts(state: LedgerState) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every pool (its meters) and every pending pay: what a refused action leaves as it was."""
    return dict(state.pools), dict(state.pending)


async def choose(page: Page, operator: str) -> None:
    """Tap who is signing."""
    await page.locator(f'#signers button[data-operator="{operator}"]').click()


def manager_signs(socket: Path, body: bytes, key: Ed25519PrivateKey) -> str:
    """The manager's key file signs the drafted enrollment and hands it in (the CLI's path)."""
    desk = SocketDesk(socket)
    event = signed_by(desk.state, decode_event(body), [("mgr", key)])
    receipt = desk.submit(event, "passkey enroll")
    assert receipt.outcome == "applied", receipt.reason
    return receipt.event_id


async def draft_of(page: Page) -> bytes:
    """The enrollment the page registered, as ``GET /console/api/drafts/{id}`` gives it."""
    draft = await page.locator("#enroll-draft").get_attribute("data-draft")
    assert draft
    base = page.url.split("/console/")[0]
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{base}/console/api/drafts/{draft}") as response,
    ):
        assert response.status == 200
        return await response.read()


async def register(page: Page, operator: str, *, by: str = "mgr") -> None:
    """``by`` starts the enrollment of ``operator``'s passkey; this page's device registers it."""
    await choose(page, by)
    await page.locator("#enroll-operator").select_option(operator)
    await page.locator("#enroll-label").fill(f"{operator}'s tablet")
    await page.locator("#enroll-go").click()
    await page.locator("#confirm-title").get_by_text("Register the passkey").wait_for()
    await page.locator("#confirm-go").click()
    await page.locator("#result").get_by_text("Registered").wait_for()


async def enroll(page: Page, socket: Path, operator: str, key: Ed25519PrivateKey) -> None:
    """The manager enrolls ``operator``'s passkey on this page's authenticator (key file)."""
    await register(page, operator)
    body = await draft_of(page)
    await asyncio.to_thread(manager_signs, socket, body, key)
    await page.locator("#confirm-cancel").click()


async def opened(page: Page, url: str) -> None:
    """The console at ``url``, once its state is drawn."""
    await page.goto(url)
    await page.wait_for_selector("body[data-loaded=true]")
