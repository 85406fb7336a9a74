"""Central's view of one property's chain: what it makes of each message and of its totals.

Central keeps, per property, a :class:`SiteLink`: the last ``site_seq`` applied, its digest
(the chain's head) and running totals (docs/wide-area.md, "The chain of a property's
messages"). :func:`judge` says what to do with a message that arrives; :func:`advanced` is the
link once an applied message is journaled; :func:`reconcile` compares the totals a property
reports after each (re)connection with central's ("A cut WAN").

Everything here is a judgement on values: the ledger journals the outcome, halts the link on a
refusal (:func:`halt`) and verifies each message's signature under the property's enrolled key,
which this module never sees. Money is integer cents.
"""

from __future__ import annotations

import re
import reprlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import msgspec

from controller.widearea.messages import (
    GENESIS,
    Contribution,
    SiteBody,
    SiteMessage,
    SiteTotals,
    digest_holds,
)

HAND_SIZE: Final = 7


class SiteLink(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One property's chain as central has applied it (kept in the ledger's state)."""

    site: str
    through: int = 0
    """The last ``site_seq`` applied."""
    head: str = GENESIS
    """The digest of message ``through``."""
    contributions: int = 0
    wager_cents: int = 0
    hits: int = 0
    reconciled_through: int = 0
    """The ``through`` of the last matched reconciliation."""
    halted: str = ""
    """Why the link takes nothing until a manager acts (a chain break, a forgery); empty if not."""
    resumed: int = 0
    """How many times a manager resumed the link after a halt. The message that halted it was
    journaled under its id (:func:`controller.wide_events.site_event_id`), so a message applied
    after the k-th resumption is journaled under an id of its own (the k in it). A snapshot
    leaves it out while 0: every digest made before it existed is unchanged."""


@dataclass(frozen=True, slots=True)
class Apply:
    """The next message of the chain, intact: journal it (once its signature verifies)."""


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Applied already (a resend, a doubled delivery): acknowledge again, apply never."""


@dataclass(frozen=True, slots=True)
class Gap:
    """Beyond the next (one lost or reordered): dropped unjournaled, resent from ``expected``."""

    expected: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A message central does not apply, and why (journaled as a fault by the ledger)."""

    reason: str
    detail: str


Verdict = Apply | Duplicate | Gap | Refused

OTHER_SITE: Final = "other-site"
HALTED: Final = "halted"
BAD_SEQ: Final = "bad-seq"
BAD_DIGEST: Final = "bad-digest"
CHAIN_BROKEN: Final = "chain-broken"
BAD_BODY: Final = "bad-body"

_PERCENT: Final = re.compile(r"[0-9]{1,12}(?:/[0-9]{1,12})?")
"""An exact fraction as the wire writes it; bounded, so no text makes a huge number."""


def judge(link: SiteLink, message: SiteMessage) -> Verdict:
    """What central does with ``message`` of the property whose chain is ``link``.

    The order of the checks is the rule. A message naming another site, or arriving while the
    link is halted, is refused whatever it says: a halted link takes, and acknowledges, nothing.
    A duplicate is acknowledged without being examined: central keeps only the head's digest,
    so it cannot tell a resend from an older message rewritten; a rewritten history shows at
    reconciliation, where the property's head must be central's. A gap is dropped unexamined,
    as it is unjournaled; it is judged in full when it is the next. Only the next message is
    examined: its digest (a corrupted or forged message), then its ``prev`` (a history that is
    not the one central applied), then its body. The signature is the ledger's to check.
    """
    if message.site != link.site:
        detail = f"a message of site {_q(message.site)} on the link of {_q(link.site)}"
        return Refused(OTHER_SITE, detail)
    if link.halted:
        return Refused(HALTED, f"site_seq {message.site_seq}: the link is halted ({link.halted})")
    if message.site_seq < 1:
        return Refused(BAD_SEQ, f"site_seq {message.site_seq}: a chain starts at 1")
    if message.site_seq <= link.through:
        return Duplicate()
    if message.site_seq > link.through + 1:
        return Gap(link.through + 1)
    if not digest_holds(message):
        detail = f"site_seq {message.site_seq}: its digest is not the one its fields give"
        return Refused(BAD_DIGEST, detail)
    if message.prev != link.head:
        detail = (
            f"site_seq {message.site_seq} follows {_q(message.prev)}, "
            f"central's head at {link.through} is {link.head}"
        )
        return Refused(CHAIN_BROKEN, detail)
    problems = body_problems(message.body)
    if problems:
        return Refused(BAD_BODY, f"site_seq {message.site_seq}: " + "; ".join(problems))
    return Apply()


def body_problems(body: SiteBody) -> tuple[str, ...]:
    """What is wrong with a message's body (empty if nothing); cards are the rules' to read."""
    ids = (("pool_id", body.pool_id), ("table_id", body.table_id), ("round_id", body.round_id))
    problems = [f"{name} is empty" for name, value in ids if not value]
    if body.seat < 1:
        problems.append(f"seat {body.seat}: seats count from 1")
    if isinstance(body, Contribution):
        if body.wager_cents <= 0:
            problems.append(f"wager_cents {body.wager_cents}: a wager is more than 0")
        return tuple(problems)
    if not body.line:
        problems.append("line is empty")
    if not _share_holds(body.percent):
        problems.append(f"percent {_q(body.percent)}: not a fraction of the meter in (0, 1]")
    if body.ways < 1:
        problems.append(f"ways {body.ways}: a hit is shared at least 1 way")
    if len(body.cards) != HAND_SIZE or len(set(body.cards)) != len(body.cards):
        problems.append(f"{len(body.cards)} cards: a seat holds {HAND_SIZE} distinct cards")
    elif not all(body.cards):
        problems.append("a card is empty")
    return tuple(problems)


def _share_holds(percent: str) -> bool:
    if not _PERCENT.fullmatch(percent):
        return False
    _, _, denominator = percent.partition("/")
    if denominator and int(denominator) == 0:
        return False
    return 0 < Fraction(percent) <= 1


def advanced(link: SiteLink, message: SiteMessage) -> SiteLink:
    """The link once ``message`` (judged :class:`Apply`) is applied: its head, its totals.

    Raises :class:`ValueError` for a message that is not the next of this chain, so that a
    caller that skipped :func:`judge` cannot move the totals.
    """
    if message.site != link.site or message.site_seq != link.through + 1:
        raise ValueError(
            f"site {_q(message.site)} site_seq {message.site_seq} is not the next message "
            f"of {_q(link.site)} (through {link.through})"
        )
    if message.prev != link.head:
        raise ValueError(f"site_seq {message.site_seq} does not follow central's head")
    body = message.body
    if isinstance(body, Contribution):
        return msgspec.structs.replace(
            link,
            through=message.site_seq,
            head=message.digest,
            contributions=link.contributions + 1,
            wager_cents=link.wager_cents + body.wager_cents,
        )
    return msgspec.structs.replace(
        link, through=message.site_seq, head=message.digest, hits=link.hits + 1
    )


def halt(link: SiteLink, reason: str) -> SiteLink:
    """The link closed after a refusal, until a manager acts; the first reason is kept."""
    if not reason:
        raise ValueError("a halt says why")
    return link if link.halted else msgspec.structs.replace(link, halted=reason)


def resume(link: SiteLink) -> SiteLink:
    """The link reopened by a manager: it expects the next message after its head again."""
    return msgspec.structs.replace(link, halted="", resumed=link.resumed + 1)


@dataclass(frozen=True, slots=True)
class Matched:
    """The property's totals through ``through`` are central's: its wide-area wagers may reopen."""

    through: int


@dataclass(frozen=True, slots=True)
class Mismatched:
    """The totals differ: each problem names the field and both values (journaled as a fault)."""

    through: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pending:
    """Central has not applied up to the totals' ``through`` yet: a gap it will be resent."""


@dataclass(frozen=True, slots=True)
class Stale:
    """Central is past the totals' ``through``: an old report, from an earlier connection."""


Reconciliation = Matched | Mismatched | Pending | Stale


def reconcile(link: SiteLink, totals: SiteTotals) -> Reconciliation:
    """Central's totals against the property's, judged after message ``totals.through``.

    A halted link never matches: the property's wagers must stay closed until a manager acts.
    """
    if link.through < totals.through:
        return Pending()
    if link.through > totals.through:
        return Stale()
    problems = [
        f"{name}: {_q(theirs)} at the property, {_q(ours)} at central"
        for name, theirs, ours in (
            ("site", totals.site, link.site),
            ("head", totals.head, link.head),
            ("contributions", totals.contributions, link.contributions),
            ("wager_cents", totals.wager_cents, link.wager_cents),
            ("hits", totals.hits, link.hits),
        )
        if theirs != ours
    ]
    if link.halted:
        problems.append(f"halted: central took nothing since {link.through} ({link.halted})")
    if problems:
        return Mismatched(link.through, tuple(problems))
    return Matched(link.through)


def reconciled(link: SiteLink, matched: Matched) -> SiteLink:
    """The link once a matched reconciliation is journaled (it never goes back)."""
    if matched.through > link.through:
        raise ValueError(f"matched through {matched.through}, applied through {link.through}")
    through = max(link.reconciled_through, matched.through)
    return msgspec.structs.replace(link, reconciled_through=through)


_REPR: Final = reprlib.Repr()
_REPR.maxstring = 72


def _q(value: object) -> str:
    """A value as a detail quotes it: a hostile site may send kilobytes (a digest fits whole)."""
    return str(value) if isinstance(value, int) else _REPR.repr(value)
