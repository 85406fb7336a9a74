"""The supervisors' console: pending pays, tables and last actions, and passkey-signed actions.

Served beside the display on the same port (``/console/``) when ``[controller]
operator_socket`` is configured, and fed by the same live stream (``/events``):

* ``GET /console/``: the page (controller/web/console.html);
* ``GET /console/api/state``: pending pays with their hands, tables, held rounds
  with their wagers and contributions, the faults waiting (controller/web/console_faults.py),
  operators and their passkeys, the last actions;
* ``POST /console/api/draft``: draft an action (verify-hit, void, adjust, operator unlock,
  passkey revoke, faults ack) for the operator who signs first; its bound bytes;
* ``POST /console/api/enroll``: draft a passkey's enrollment; the bytes its registration's
  challenge is the digest of;
* ``POST /console/api/register``: the authenticator's registration; the enrollment, for the
  managers to sign;
* ``POST /console/api/sign``: one passkey's assertion over a draft, submitted once the draft has
  the signatures the ledger asks for;
* ``GET /console/api/drafts/{id}``: a draft's event, for a manager who signs it with a key file.

The web server only relays (docs/security.md, "The console"): it drafts the event and its
bound bytes (controller/web/console_drafts.py), the page asks the authenticator to sign their
SHA-256, and the server attaches the assertion as the Signature's ``webauthn`` form and hands
the event in through the operator socket, the CLI's one door (controller/web/console_desk.py).
It holds no key: the ledger checks every assertion, credential, role, binding and dual control.

WebAuthn needs a secure context: the console is served over HTTPS with the property's
certificate (``[web] tls_cert``, ``tls_key``), or on a localhost bind (the demo); on any other
bind without TLS it is not served, and ``/console/`` says why (:class:`ConsoleOff`). The
relying party id and the origin are the configuration's (``[web] console_rp_id``,
``console_origin``, controller/config/web_section.py), never the request's: a ``Host`` header
is the client's to choose. Both are written into the enrollment the managers sign, and every
later assertion must match them; an enrollment asked for from another origin is refused.
"""

from __future__ import annotations

import base64
import collections
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec
from aiohttp import web

from controller.clock import utc_now
from controller.event_base import WebAuthnAssertion
from controller.events import PasskeyRegistration, RoundVoided, encode_event
from controller.ledger.passkeys import passkeys_of
from controller.web.console_desk import ConsoleDesk, DeskError
from controller.web.console_drafts import (
    Draft,
    DraftError,
    Drafts,
    add_assertion,
    drafted,
    enrollment_draft,
    registered,
)
from controller.web.console_faults import FaultWatch, acknowledgement_count, faults_view
from controller.web.console_rounds import held_rounds, round_view
from controller.web.console_words import plain
from controller.web.policy import SECURITY_HEADERS, content_security_policy

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.schema import WebSettings
    from controller.ledger.state import LedgerState
    from controller.web.snapshot import PageState

PAGE: Final = (resources.files("controller.web") / "console.html").read_text(encoding="utf-8")
POLICY: Final = content_security_policy(PAGE)
"""The display's policy (controller/web/policy.py) with the console page's own digests."""
MAX_BODY: Final = 64 * 1024
T = TypeVar("T")
ACTIONS_KEPT: Final = 20
VERIFIED_SHOWN: Final = 10


class _Actions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    action: str
    by: str
    payout_id: str = ""
    table_id: str = ""
    round_id: str = ""
    pool_id: str = ""
    account: str = ""
    amount_cents: int = 0
    name: str = ""
    reason: str = ""
    through: str = ""


class _Enroll(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    operator: str
    label: str
    by: str


class _Register(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    draft: str
    credential_id: str
    attestation_object: str
    client_data_json: str


class _Sign(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    draft: str
    credential_id: str
    authenticator_data: str
    client_data_json: str
    signature: str


async def _body(request: web.Request, kind: type[T]) -> T:
    data = await request.content.read(MAX_BODY + 1)
    if len(data) > MAX_BODY:
        raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=len(data))
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.MsgspecError as error:
        raise web.HTTPBadRequest(text=f"not a console request: {error}") from None


def _refused(message: str) -> web.Response:
    return web.json_response({"status": "refused", "plain": message, "reason": message})


async def _console_headers(_: web.Request, response: web.StreamResponse) -> None:
    """The console page's own policy, after the display's headers (a sub-application's hook)."""
    response.headers.update(SECURITY_HEADERS)
    response.headers["Content-Security-Policy"] = POLICY


@dataclass(frozen=True, slots=True)
class ConsoleSite:
    """Where the console's passkeys belong: its relying party id and its page's origin."""

    rp_id: str
    origin: str

    @classmethod
    def of(cls, web: WebSettings) -> ConsoleSite | None:
        """The site of a loaded ``[web]`` section; None: no secure context, no console."""
        if not web.console_rp_id or not web.console_origin:
            return None
        return cls(web.console_rp_id, web.console_origin)


OFF_PAGE: Final = (
    "The supervisors' console is off: its passkeys need a secure context, and this port "
    "serves plain HTTP on an address other machines reach. Set [web] tls_cert, tls_key and "
    "console_rp_id to serve it over HTTPS, or use it on the controller's own screen with a "
    "localhost bind (the console's section of docs/operations.md). The command line signs "
    "every action meanwhile.\n"
)


class ConsoleOff:
    """``/console/`` where the console cannot be served securely: a plain page saying why."""

    def app(self) -> web.Application:
        """The sub-application mounted at ``/console/``: every path answers the page."""
        app = web.Application(client_max_size=MAX_BODY)
        app.on_response_prepare.append(_console_headers)
        app.router.add_route("*", "/{tail:.*}", self.off)
        return app

    async def to_page(self, _: web.Request) -> web.Response:
        """``/console`` is the page's folder."""
        raise web.HTTPFound("/console/")

    async def off(self, _: web.Request) -> web.Response:
        """The plain page (503: the service is there, but not served here)."""
        return web.Response(
            status=503, text=OFF_PAGE, content_type="text/plain", charset="utf-8",
            headers={"Cache-Control": "no-store"},
        )  # fmt: skip


class Console:
    """The console's endpoints over the display's state and the operator socket."""

    def __init__(self, page: PageState, operator_socket: Path, site: ConsoleSite) -> None:
        self.page = page
        self.site = site
        self.desk = ConsoleDesk(operator_socket)
        self.drafts = Drafts()
        self.actions: collections.deque[dict[str, Any]] = collections.deque(maxlen=ACTIONS_KEPT)
        self.faults = FaultWatch(page.runtime.journal.path)

    def app(self) -> web.Application:
        """The sub-application mounted at ``/console/``."""
        app = web.Application(client_max_size=MAX_BODY)
        app.on_response_prepare.append(_console_headers)
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/api/state", self.state),
                web.post("/api/draft", self.draft),
                web.post("/api/enroll", self.enroll),
                web.post("/api/register", self.register),
                web.post("/api/sign", self.sign),
                web.get("/api/drafts/{draft}", self.saved),
            ]
        )
        return app

    async def to_page(self, _: web.Request) -> web.Response:
        """``/console`` is the page's folder."""
        raise web.HTTPFound("/console/")

    async def index(self, _: web.Request) -> web.Response:
        """The console page."""
        return web.Response(text=PAGE, content_type="text/html", charset="utf-8")

    async def state(self, _: web.Request) -> web.Response:
        """Pending pays, tables, operators and their passkeys, and the last actions."""
        document = self.page.snapshot()
        state = self.page.runtime.journal.state
        await self.faults.refresh(state)
        return web.json_response(
            {
                "at": document["at"],
                "controller": document["controller"],
                "pending": document["pending"],
                "tables": document["tables"],
                "held": held_rounds(state),
                "faults": faults_view(self.faults, state),
                "operators": _operators(state),
                "dual_control_cents": state.authority.dual_control_cents,
                "actions": list(self.actions),
                "verified": self._verified(),
            },
            headers={"Cache-Control": "no-store"},
        )

    def _verified(self) -> list[dict[str, Any]]:
        """The last pays verified, whoever verified them (the CLI too), newest first."""
        # The newest few, by an index: every pay the journal holds would stall the loop.
        done = self.page.runtime.journal.last_verified(VERIFIED_SHOWN)
        return [
            {
                "payout_id": record.payout.payout_id,
                "win_cents": record.payout.win_cents,
                "verified_by": record.verified_by,
                "seq": record.verified_seq,
            }
            for record in done
        ]

    async def draft(self, request: web.Request) -> web.Response:
        """Draft an action for ``by`` to sign first: its bound bytes."""
        asked = await _body(request, _Actions)
        try:
            now = await self.desk.state()
            count = 0
            if asked.action == "faults ack":  # the count is the ledger's, or the journal's
                await self.faults.refresh(now.state)
                count = acknowledgement_count(self.faults, now.state, asked.through)
            made = drafted(
                now.state, now.at, asked.action, asked.by,
                payout_id=asked.payout_id, table_id=asked.table_id, round_id=asked.round_id,
                pool_id=asked.pool_id, account=asked.account, amount_cents=asked.amount_cents,
                name=asked.name, reason=asked.reason, through=asked.through, count=count,
            )  # fmt: skip
        except (DeskError, DraftError) as error:
            return _refused(str(error))
        return web.json_response(_drafted(self.drafts.keep(made), now.state))

    async def enroll(self, request: web.Request) -> web.Response:
        """Draft a passkey's enrollment at the configured relying party id and origin.

        The browser's ``Origin`` must be the configured one: a page opened at another address
        could not register a passkey the ledger would take, and is told where to go instead.
        """
        asked = await _body(request, _Enroll)
        origin = request.headers.get("Origin", "")
        site = self.site
        if not origin:
            return _refused("the browser did not say where the page came from: reload it")
        if origin != site.origin:
            return _refused(
                f"this page was opened at {origin}, not at the console's address "
                f"{site.origin}: open the console there to enroll a passkey"
            )
        try:
            now = await self.desk.state()
            made = enrollment_draft(
                now.state, now.at, operator=asked.operator, label=asked.label, by=asked.by,
                rp_id=site.rp_id, origin=site.origin,
            )  # fmt: skip
        except (DeskError, DraftError) as error:
            return _refused(str(error))
        return web.json_response(_drafted(self.drafts.keep(made), now.state))

    async def register(self, request: web.Request) -> web.Response:
        """The authenticator's registration: the enrollment is then the managers' to sign."""
        asked = await _body(request, _Register)
        try:
            draft = self.drafts.get(asked.draft)
            registration = PasskeyRegistration(
                asked.credential_id, asked.attestation_object, asked.client_data_json
            )
            registered(draft, registration)
            now = await self.desk.state()
        except (DeskError, DraftError) as error:
            return _refused(str(error))
        return web.json_response(_drafted(draft, now.state))

    async def sign(self, request: web.Request) -> web.Response:
        """Hold one assertion; once the draft has the signatures needed, hand it in."""
        asked = await _body(request, _Sign)
        assertion = WebAuthnAssertion(
            asked.credential_id, asked.authenticator_data, asked.client_data_json
        )
        try:
            draft = self.drafts.get(asked.draft)
            now = await self.desk.state()
            who = add_assertion(now.state, draft, assertion, asked.signature)
            if len(draft.signatures) < draft.needed:
                return web.json_response(
                    {"status": "waiting", "signed": draft.signed, "needed": draft.needed}
                )
            self.drafts.drop(draft.draft_id)
            receipt = await self.desk.submit(draft.signed_event(), draft.command)
        except (DeskError, DraftError) as error:
            return _refused(str(error))
        del who
        applied = receipt.outcome == "applied"
        self.actions.appendleft(
            {
                "at": utc_now(),
                "command": draft.command,
                "event_id": receipt.event_id,
                "signed": draft.signed,
                "outcome": receipt.outcome,
                "reason": receipt.reason,
                "seq": receipt.seq,
            }
        )
        return web.json_response(
            {
                "status": "applied" if applied else "refused",
                "seq": receipt.seq,
                "event_id": receipt.event_id,
                "signed": draft.signed,
                "reason": receipt.reason,
                "plain": "" if applied else plain(receipt.reason),
            }
        )

    async def saved(self, request: web.Request) -> web.Response:
        """A draft's event as the journal encodes it (a manager signs it with a key file)."""
        try:
            draft = self.drafts.get(request.match_info["draft"])
        except DraftError as error:
            return _refused(str(error))
        return web.Response(body=encode_event(draft.event), content_type="application/json")


def _drafted(draft: Draft, state: LedgerState) -> dict[str, Any]:
    """What the page is given of a draft: its bytes, and the credentials that may sign it.

    A void's draft also gives the round's wagers and contributions, as the state it was drafted
    against holds them: its confirmation repeats them (controller/web/console_rounds.py).
    """
    passkeys = passkeys_of(state)
    event = draft.event
    held = None
    if isinstance(event, RoundVoided):
        held = round_view(state, event.table_id, event.round_id)
    return {
        "round": held,
        "draft": draft.draft_id,
        "bytes": base64.b64encode(draft.bound).decode(),
        "registering": draft.registering,
        "needed": draft.needed,
        "signed": draft.signed,
        "credentials": {
            credential: {"operator": passkey.operator, "rp_id": passkey.rp_id}
            for credential, passkey in passkeys.items()
            if not passkey.revoked and passkey.clone_suspected is None
        },
    }


def _operators(state: LedgerState) -> list[dict[str, Any]]:
    """Every operator with a key, their role, and their live passkeys."""
    passkeys = passkeys_of(state)
    return [
        {
            "name": name,
            "role": str(operator.role),
            "locked": operator.locked,
            "passkeys": [
                {"credential": credential, "label": passkey.label, "rp_id": passkey.rp_id}
                for credential, passkey in passkeys.items()
                if passkey.operator == name and not passkey.revoked
            ],
        }
        for name, operator in sorted(state.operators.items())
        if operator.public_key
    ]
