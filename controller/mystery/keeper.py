"""The keeper of sealed triggers: its rules as pure functions, its interface, the in-process one.

The daemon never learns a trigger before its hit. For each contribution to a mystery level it
asks the **keeper**, which holds the sealed draw, whether the meter after that contribution
has reached the trigger; the keeper answers "not yet" or the reveal. In production the keeper
is the signer process (controller/service/signer_server.py), the one holding the controller
key, whose state a shell as the service user can neither read nor write; the daemon asks it
through :class:`~controller.runtime.remote_signer.RemoteSigner`. For the demo and a
``key_file`` the keeper is :class:`LocalKeeper`, in the daemon's process, under the same rules.

**Probing.** A shell as the service user can talk to the signer's socket, so it can ask too.
Two rules keep it from learning a trigger by asking (:func:`judge_check`):

* a draw's meter only goes up: a query below the highest one asked is refused. Asking never
  goes back, so "not yet" at a high meter cannot be followed by a lower question;
* a query that reaches the trigger **spends** the draw: the keeper reveals it and from then on
  answers every query of that draw with the same reveal; the level's next draw must be made.

What remains: an attacker can advance the keeper's view of the meter (and learn that the
trigger is above what it asked), or spend the draw early and learn the trigger. Either way
the daemon's next question no longer follows its own last one, and :func:`probed` (run by the
daemon's client on every answer) turns that into :class:`MysteryAlarmError`: the daemon must
stop the level and call a person rather than play on a trigger someone may know
(docs/security.md, "Mystery levels: the sealed trigger").

**Crash order.** The daemon journals a contribution before it asks about it, and asks again
after a restart: a question asked twice gets the same answer (an equal meter is not below the
last, a spent draw answers with its reveal), so the keeper's view never runs ahead of the
journal on its own.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Final, Literal, Protocol

import msgspec

from controller.mystery.core import (
    Drawn,
    DrawRequest,
    Meter,
    MysteryInputError,
    MysteryRefusedError,
    Reveal,
    Sealed,
    seal,
)
from controller.mystery.envelope import Envelope, open_envelope, seal_envelope

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from controller.mystery.envelope import SealingKey
    from controller.mystery.store import SealedFile


MAX_LEVELS: Final = 4_096
"""The most levels a keeper holds draws for: anyone who can reach the signer's socket could
otherwise grow its state file without bound by drawing for made-up levels."""


class Query(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A question: has draw ``draw`` of this level reached its trigger at ``meter``."""

    controller: str
    journal: str
    pool: str
    level: str
    draw: int
    meter: Meter


class Verdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The keeper's answer: the reveal (the trigger is reached) or none (not yet).

    ``previous``: the highest meter the keeper had been asked about for this draw before this
    query (None: none), which the daemon checks against its own (:func:`probed`).
    """

    draw: int
    previous: Meter | None = None
    reveal: Reveal | None = None

    @property
    def reached(self) -> bool:
        """Whether the level hits at this contribution."""
        return self.reveal is not None


class Adoption(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A request to hold another keeper's draw: the draw, its envelope, the meter asked last."""

    drawn: Drawn
    envelope: Envelope
    since: Meter | None = None


class KeeperAheadError(MysteryRefusedError):
    """The keeper holds a state of the level its asker did not make: refused, and an alarm.

    The signer answers it with ``ahead`` (controller/security/signer.py) and the daemon's
    client raises :class:`MysteryAlarmError` for it: someone else asked the keeper first.
    """


class MeterBehindError(KeeperAheadError):
    """The keeper was asked about a higher meter of this draw than the one asked now."""


class DrawTakenError(KeeperAheadError):
    """This draw number was made already with another range (someone drew it first)."""


class MysteryAlarmError(MysteryRefusedError):
    """Someone other than the daemon asked the keeper about a draw: its trigger may be known.

    The daemon stops the level (no hit is paid on it, no draw made) until a person looks.
    """


class Keeper(Protocol):
    """What holds the sealed triggers: the signer process, or :class:`LocalKeeper`."""

    def draw(self, request: DrawRequest) -> Drawn:
        """The level's draw ``request.draw``: drawn now, or the one already drawn (same range)."""
        ...

    def check(self, query: Query, since: Meter | None) -> Verdict:
        """Has the trigger been reached? ``since``: the meter before this contribution.

        ``since`` is None for the first contribution after the draw. Raises
        :class:`MysteryAlarmError` when the keeper's view is ahead of the daemon's.
        """
        ...

    def envelope(self, drawn: Drawn) -> Envelope | None:
        """The level's current draw sealed for the cluster's keepers (None: no sealing key).

        controller/mystery/envelope.py; the journal records it with the draw.
        """
        ...

    def adopt(self, drawn: Drawn, envelope: Envelope, since: Meter | None) -> None:
        """Hold another keeper's draw, opened from its envelope, its view of the meter ``since``.

        The draw held already is left as it is; see :func:`judge_adopt`.
        """
        ...


def slot(controller: str, journal: str, pool: str, level: str) -> str:
    """The key of a level in the keeper's state (one draw kept per level)."""
    return msgspec.json.encode([controller, journal, pool, level]).decode()


def judge_draw(current: Sealed | None, request: DrawRequest) -> Literal["new", "again"]:
    """Whether the keeper draws ``request`` anew or answers the draw it has (else refused).

    ``current``: the level's latest draw. The same draw number again (the daemon restarted
    before journaling it) is answered with the same statement, never drawn twice, so that
    nobody can draw again until a trigger suits them; another range for it is refused. The next
    number is drawn only once the current one is spent (a level's trigger is never replaced
    before its hit), and no number is skipped or gone back to.
    """
    reason = request.problem()
    if reason is not None:
        raise MysteryInputError(reason)
    if current is None:
        return "new"
    held = current.drawn
    if request.draw == held.draw:
        if (request.floor, request.ceiling) != (held.floor, held.ceiling):
            raise DrawTakenError(
                f"draw {held.draw} was made from {held.floor} to {held.ceiling} cents, and "
                f"is asked again from {request.floor} to {request.ceiling}"
            )
        return "again"
    if request.draw < held.draw:
        raise MysteryRefusedError(
            f"draw {request.draw} is below draw {held.draw} the keeper made at {held.at}: "
            "the journal went back"
        )
    if current.hit is None:
        raise MysteryRefusedError(
            f"draw {held.draw} has not hit yet: its trigger stays until the hit"
        )
    if request.draw != held.draw + 1:
        raise MysteryRefusedError(f"draw {request.draw} skips draw {held.draw + 1}")
    return "new"


def judge_check(current: Sealed | None, query: Query) -> tuple[Verdict, Sealed, bool]:
    """The verdict on ``query``, the draw as kept after it, and whether it was spent now.

    Refused: no such draw (or not the level's latest), a meter that is none, and a meter below
    the highest asked (:class:`MeterBehindError`). A meter at the trigger or past it spends
    the draw; a spent draw answers a meter at its hit or above with the same reveal.
    """
    problem = query.meter.problem()
    if problem is not None:
        raise MysteryInputError(problem)
    if current is None or current.drawn.draw != query.draw:
        held = "none" if current is None else f"draw {current.drawn.draw}"
        raise MysteryRefusedError(
            f"no draw {query.draw} of {query.pool}/{query.level} is kept (the keeper holds "
            f"{held}; a draw of another node's key is taken from its envelope with a sealing "
            "key, docs/ha.md)"
        )
    asked = query.meter.exact()
    previous = current.last
    if previous is not None and asked < previous.exact():
        raise MeterBehindError(
            f"a meter of {query.meter.cents} cents is below the {previous.cents} cents "
            f"already asked about for draw {query.draw}"
        )
    if current.hit is not None:
        return Verdict(query.draw, previous, current.reveal()), current, False
    if query.meter.reaches(current.trigger):
        spent = msgspec.structs.replace(current, last=query.meter, hit=query.meter)
        return Verdict(query.draw, previous, spent.reveal()), spent, True
    kept = msgspec.structs.replace(current, last=query.meter)
    return Verdict(query.draw, previous), kept, False


def judge_adopt(current: Sealed | None, drawn: Drawn) -> Literal["adopt", "held"]:
    """Whether the keeper takes another keeper's ``drawn`` (else refused).

    ``current``: the level's latest draw here. The same draw held already (this keeper drew it,
    or took it before a restart) is kept as it is, so that its view of the meter stays what it
    answered (a view ahead of the daemon's is the next check's alarm, :func:`probed`); the same
    number with another commitment is someone else's draw (:class:`DrawTakenError`). A lower
    draw held here, spent or not, was played on by another node since: the journal's later
    draw replaces it. A higher one means the journal went back.
    """
    if current is None or current.drawn.draw < drawn.draw:
        return "adopt"
    held = current.drawn
    if held.draw > drawn.draw:
        raise MysteryRefusedError(
            f"draw {drawn.draw} is below draw {held.draw} the keeper holds: the journal went back"
        )
    if not hmac.compare_digest(held.commitment, drawn.commitment):
        raise DrawTakenError(
            f"draw {held.draw} is held with another commitment than the journal's: someone "
            "else drew it"
        )
    return "held"


def probed(verdict: Verdict, asked: Meter, since: Meter | None) -> str | None:
    """Why the keeper's view shows that someone else asked (None: only the daemon did).

    ``asked``: the meter the daemon asked at; ``since``: its meter before this contribution
    (None: the first since the draw). The keeper's ``previous`` may be none (nothing asked, or
    a keeper restarted before writing its view), at or below ``since`` (the daemon's own last
    question), or ``asked`` itself (the same question again, after a restart); anything else
    is a question the daemon never asked.
    """
    revealed = verdict.reveal
    if revealed is not None and revealed.hit.exact() != asked.exact():
        return (
            f"the keeper spent draw {verdict.draw} at a meter of {revealed.hit.cents} cents, "
            f"and the daemon asked at {asked.cents}: someone else is asking the keeper"
        )
    previous = verdict.previous
    if previous is None or previous.exact() == asked.exact():
        return None
    if since is not None and previous.exact() <= since.exact():
        return None
    own = "it had asked nothing since" if since is None else f"it last asked {since.cents}"
    return (
        f"the keeper had been asked about draw {verdict.draw} at {previous.cents} cents, and "
        f"the daemon {own}: someone else is asking the keeper"
    )


class Vault:
    """The sealed draws of a keeper, one per level, and the file they are kept in (if any).

    The state is written before an answer leaves: durably (flushed) at a draw and at a spend;
    after a "not yet", the new view of the meter is appended to the views log without a flush
    (controller/mystery/store.py: a keeper that crashes keeps its view; one that loses power
    may restart behind, which :func:`probed` allows).
    """

    def __init__(self, store: SealedFile | None = None, sealing: SealingKey | None = None) -> None:
        self.store = store
        self.sealing = sealing
        """The cluster's keepers' sealing key (controller/mystery/envelope.py); None: none."""
        self.sealed: dict[str, Sealed] = {} if store is None else store.read()

    def draw(self, request: DrawRequest, sign: Callable[[bytes], str]) -> Drawn:
        """The draw ``request`` asks for (see :func:`judge_draw`)."""
        key = slot(request.controller, request.journal, request.pool, request.level)
        current = self.sealed.get(key)
        if judge_draw(current, request) == "again" and current is not None:
            return current.drawn
        if current is None and len(self.sealed) >= MAX_LEVELS:
            raise MysteryRefusedError(
                f"the keeper holds draws for {len(self.sealed):,} levels already (at most "
                f"{MAX_LEVELS:,})"
            )
        self._keep({**self.sealed, key: seal(request, sign)}, durable=True)
        return self.sealed[key].drawn

    def check(self, query: Query) -> Verdict:
        """The keeper's verdict on ``query`` (see :func:`judge_check`)."""
        key = slot(query.controller, query.journal, query.pool, query.level)
        current = self.sealed.get(key)
        verdict, kept, spent = judge_check(current, query)
        if spent:
            self._keep({**self.sealed, key: kept}, durable=True)
        elif kept != current:
            self.sealed[key] = kept
            if self.store is not None:
                self.store.note(self.sealed, key)
        return verdict

    def envelope(self, drawn: Drawn) -> Envelope | None:
        """The draw held for ``drawn``'s level sealed for the cluster (None: no sealing key).

        Refused unless the keeper holds that very draw, unspent: nobody gets an envelope of a
        draw it did not make, or one of a trigger already revealed.
        """
        if self.sealing is None:
            return None
        current = self.sealed.get(slot(drawn.controller, drawn.journal, drawn.pool, drawn.level))
        if (
            current is None
            or current.drawn.draw != drawn.draw
            or not hmac.compare_digest(current.drawn.commitment, drawn.commitment)
        ):
            raise MysteryRefusedError(
                f"the keeper holds no draw {drawn.draw} of {drawn.pool} with that commitment"
            )
        if current.hit is not None:
            raise MysteryRefusedError(f"draw {drawn.draw} of {drawn.pool} is spent")
        return seal_envelope(self.sealing, current)

    def adopt(self, drawn: Drawn, envelope: Envelope, since: Meter | None) -> None:
        """Take another keeper's draw from its envelope (see :func:`judge_adopt`)."""
        if self.sealing is None:
            raise MysteryRefusedError(
                f"draw {drawn.draw} of {drawn.pool} was made by key {drawn.key_id}, and this "
                "keeper holds no sealing key to open its envelope (docs/ha.md)"
            )
        if since is not None and since.problem() is not None:
            raise MysteryInputError(f"the meter to adopt at: {since.problem()}")
        key = slot(drawn.controller, drawn.journal, drawn.pool, drawn.level)
        current = self.sealed.get(key)
        if judge_adopt(current, drawn) == "held":
            return
        if current is None and len(self.sealed) >= MAX_LEVELS:
            raise MysteryRefusedError(
                f"the keeper holds draws for {len(self.sealed):,} levels already (at most "
                f"{MAX_LEVELS:,})"
            )
        opened = open_envelope(self.sealing, drawn, envelope)
        self._keep({**self.sealed, key: msgspec.structs.replace(opened, last=since)}, durable=True)

    def _keep(self, sealed: Mapping[str, Sealed], *, durable: bool) -> None:
        if self.store is not None:
            self.store.write(sealed, durable=durable)
        self.sealed = dict(sealed)


class _Signs(Protocol):
    @property
    def key_id(self) -> str: ...

    def sign(self, data: bytes) -> str: ...


class LocalKeeper:
    """The keeper in the daemon's process, with the key in the process (the demo, a key_file).

    As strong as its key: whoever can read the daemon's memory or the ``store`` file can read
    the triggers, which is why production keeps them in the signer process instead.
    """

    def __init__(
        self, key: _Signs, store: SealedFile | None = None, sealing: SealingKey | None = None
    ) -> None:
        self.key = key
        self.vault = Vault(store, sealing)

    def draw(self, request: DrawRequest) -> Drawn:
        """See :meth:`Keeper.draw`; the request must name this key."""
        if request.key_id != self.key.key_id:
            raise MysteryRefusedError(f"the draw names key {request.key_id}, not this keeper's")
        try:
            return self.vault.draw(request, self.key.sign)
        except KeeperAheadError as error:
            raise MysteryAlarmError(f"the keeper is ahead of the daemon: {error}") from error

    def check(self, query: Query, since: Meter | None) -> Verdict:
        """See :meth:`Keeper.check`."""
        try:
            verdict = self.vault.check(query)
        except KeeperAheadError as error:
            raise MysteryAlarmError(f"the keeper is ahead of the daemon: {error}") from error
        reason = probed(verdict, query.meter, since)
        if reason is not None:
            raise MysteryAlarmError(reason)
        return verdict

    def envelope(self, drawn: Drawn) -> Envelope | None:
        """See :meth:`Keeper.envelope`."""
        return self.vault.envelope(drawn)

    def adopt(self, drawn: Drawn, envelope: Envelope, since: Meter | None) -> None:
        """See :meth:`Keeper.adopt`."""
        try:
            self.vault.adopt(drawn, envelope, since)
        except KeeperAheadError as error:
            raise MysteryAlarmError(f"the keeper is ahead of the daemon: {error}") from error
