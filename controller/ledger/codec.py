"""Ledger state to the journal's rows and back: pools, tables, open rounds, payouts, meta.

The ledger's serialization lives beside its types, so that the journal records the ledger's
state without knowing its shape: the append path is handed these encoders through
:mod:`controller.ledger.domain` (docs/architecture.md, "The layers").

Pools are stored whole as JSON with exact amounts as fraction text; tables as the
``table-configured`` event that set them (rules are rebuilt from it); open rounds as their
locked wagers; payouts as one row each, queried by the supervisors' commands.

The JSON is canonical (keys sorted, no spaces) and written by msgspec: these rows are read
back by :mod:`json`, and compared by re-encoding, never hashed, so only their values matter.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.effects import fraction_text
from controller.ledger.journal_binding import JournalBinding
from controller.ledger.operators import Authority
from controller.ledger.pool import Contribution, Feed, HitRecord, Pool, PoolTerms
from controller.ledger.settlement import Payout, PayoutKind, PayoutStatus, SeatWager
from controller.ledger.table_state import Phase, TableState
from controller.ledger.wide_area.sites import LinkedSite, SiteChain
from controller.mystery.core import Drawn
from controller.mystery.envelope import Envelope
from controller.rules.spots import Spot
from controller.security.manifest import ApprovedManifest

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.ledger.operators import Operator

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


def _canonical(document: object) -> str:
    return _CANONICAL.encode(document).decode()


def _terms_json(terms: PoolTerms) -> dict[str, Any]:
    document: dict[str, Any] = {
        "seed_cents": terms.seed_cents,
        "rate_of_progression": fraction_text(terms.rate_of_progression),
        "reserve_rate": fraction_text(terms.reserve_rate),
        "limit_cents": terms.limit_cents,
        "paytable": terms.paytable,
    }
    if terms.must_hit_by_cents is not None:  # a mystery level's only: the others' text stays
        document["must_hit_by_cents"] = terms.must_hit_by_cents
        document["spill_to"] = terms.spill_to
    return document


def _terms(document: dict[str, Any]) -> PoolTerms:
    return PoolTerms(
        seed_cents=document["seed_cents"],
        rate_of_progression=Fraction(document["rate_of_progression"]),
        reserve_rate=Fraction(document["reserve_rate"]),
        limit_cents=document["limit_cents"],
        paytable=document["paytable"],
        must_hit_by_cents=document.get("must_hit_by_cents"),
        spill_to=document.get("spill_to", ""),
    )


EXACT = ("meter", "reserve", "overflow", "contributions")
TRANSFERS = ("transferred_in", "transferred_out", "orphaned")
COUNTERS = (
    "revision", "wagers_count", "wagers_cents", "hits_count", "paid_cents",
    "house_funding_cents", "reserve_funding_cents", "adjustments_cents", "pending_revision",
)  # fmt: skip


def pool_json(pool: Pool) -> str:
    """A pool as canonical JSON."""
    document: dict[str, Any] = {"pool_id": pool.pool_id, "terms": _terms_json(pool.terms)}
    document |= {name: fraction_text(getattr(pool, name)) for name in EXACT}
    document |= {name: getattr(pool, name) for name in COUNTERS}
    document["pending_terms"] = _terms_json(pool.pending_terms) if pool.pending_terms else None
    document["last_hits"] = [asdict(hit) for hit in pool.last_hits]
    if pool.status:  # only once out of play: a pool in play keeps the text it always had
        document |= {"status": pool.status, "status_reason": pool.status_reason}
    for name in TRANSFERS:  # only once a transfer moved money, for the same reason
        if getattr(pool, name):
            document[name] = fraction_text(getattr(pool, name))
    if pool.opened_at:  # only under a jurisdiction profile, for the same reason
        document["opened_at"] = pool.opened_at
    if pool.terms.must_hit_by_cents is not None:  # a mystery level's, for the same reason
        document |= _mystery_json(pool)
    return _canonical(document)


def _mystery_json(pool: Pool) -> dict[str, Any]:
    fed = [
        [feed.event_id, feed.table_id, feed.round_id, feed.seat, feed.wager_cents,
         fraction_text(feed.before), fraction_text(feed.after)]
        for feed in pool.fed
    ]  # fmt: skip
    document = {
        "draw": msgspec.to_builtins(pool.draw) if pool.draw is not None else None,
        "draws": pool.draws,
        "fed": fed,
        "spilled_in": fraction_text(pool.spilled_in),
        "spilled_out": fraction_text(pool.spilled_out),
    }
    if pool.sealed is not None:  # only with an envelope: a draw without one digests as before
        document["sealed"] = msgspec.to_builtins(pool.sealed)
    return document


def _feed(row: list[Any]) -> Feed:
    event_id, table_id, round_id, seat, wager, before, after = row
    return Feed(event_id, table_id, round_id, seat, wager, Fraction(before), Fraction(after))


def pool_from_json(text: str) -> Pool:
    """The inverse of :func:`pool_json`."""
    document = json.loads(text)
    pending = document["pending_terms"]
    return Pool(
        pool_id=document["pool_id"],
        terms=_terms(document["terms"]),
        revision=document["revision"],
        meter=Fraction(document["meter"]),
        reserve=Fraction(document["reserve"]),
        overflow=Fraction(document["overflow"]),
        contributions=Fraction(document["contributions"]),
        wagers_count=document["wagers_count"],
        wagers_cents=document["wagers_cents"],
        hits_count=document["hits_count"],
        paid_cents=document["paid_cents"],
        house_funding_cents=document["house_funding_cents"],
        reserve_funding_cents=document["reserve_funding_cents"],
        adjustments_cents=document["adjustments_cents"],
        pending_terms=_terms(pending) if pending else None,
        pending_revision=document["pending_revision"],
        last_hits=tuple(HitRecord(**hit) for hit in document["last_hits"]),
        status=document.get("status", ""),
        status_reason=document.get("status_reason", ""),
        transferred_in=Fraction(document.get("transferred_in", 0)),
        transferred_out=Fraction(document.get("transferred_out", 0)),
        orphaned=Fraction(document.get("orphaned", 0)),
        opened_at=document.get("opened_at", ""),
        draw=msgspec.convert(draw, Drawn) if (draw := document.get("draw")) else None,
        draws=document.get("draws", 0),
        sealed=msgspec.convert(sealed, Envelope) if (sealed := document.get("sealed")) else None,
        fed=tuple(_feed(row) for row in document.get("fed", ())),
        spilled_in=Fraction(document.get("spilled_in", 0)),
        spilled_out=Fraction(document.get("spilled_out", 0)),
    )


def _wager_row(wager: SeatWager) -> list[object]:
    row: list[object] = [wager.seat, str(wager.spot), wager.amount_cents]
    if wager.contribution is not None:
        row += _parts(wager.contribution)
    if wager.levels:  # a multi-level pool's: one [to_meter, to_reserve, to_overflow] a level
        row.append([_parts(share) for share in wager.levels])
    return row


def _parts(share: Contribution) -> list[object]:
    return [
        fraction_text(share.to_meter),
        fraction_text(share.to_reserve),
        fraction_text(share.to_overflow),
    ]


def wagers_json(wagers: tuple[SeatWager, ...]) -> str:
    """Locked wagers of an open round, each ``[seat, spot, cents]``.

    A progressive wager adds the exact contribution it made at lock: ``to_meter``,
    ``to_reserve`` and ``to_overflow`` as fraction text; on a multi-level pool, one list of
    the three for each level, in the paytable's level order.
    """
    return _canonical([_wager_row(wager) for wager in wagers])


def _wager(row: list[Any]) -> SeatWager:
    seat, spot, amount, *share = row
    if not share:  # no contribution, or a progressive wager stored before they were recorded
        return SeatWager(seat, Spot(spot), amount)
    if len(share) == 1:  # a multi-level pool's, level by level
        levels = tuple(
            Contribution(amount, *(Fraction(part) for part in parts)) for parts in share[0]
        )
        return SeatWager(seat, Spot(spot), amount, None, levels)
    to_meter, to_reserve, to_overflow = (Fraction(part) for part in share)
    contribution = Contribution(amount, to_meter, to_reserve, to_overflow)
    return SeatWager(seat, Spot(spot), amount, contribution)


def wagers_from_json(text: str) -> tuple[SeatWager, ...]:
    """The inverse of :func:`wagers_json`.

    Rows written before contributions were recorded (``[seat, spot, cents]`` only) are read
    too; :mod:`controller.journal.restore` finds their contributions in the journal.
    """
    return tuple(_wager(row) for row in json.loads(text))


PAYOUT_COLUMNS = (
    "payout_id", "seat", "spot", "kind", "wager_cents", "line", "win_cents", "returned_cents",
    "from_meter_cents", "pool_id", "capped_cents", "envy_from_seat", "status", "tax_report",
    "hand",
)  # fmt: skip


def payout_row(payout: Payout) -> dict[str, Any]:
    """A payout as a ``payouts`` row (without its journal context)."""
    row = {name: getattr(payout, name) for name in PAYOUT_COLUMNS}
    row |= {"spot": str(payout.spot), "kind": str(payout.kind), "status": str(payout.status)}
    row["tax_report"] = int(payout.tax_report)
    return row


def payout_from_row(row: dict[str, Any]) -> Payout:
    """The inverse of :func:`payout_row` (extra columns are ignored)."""
    values = {name: row[name] for name in PAYOUT_COLUMNS}
    values |= {
        "spot": Spot(row["spot"]),
        "kind": PayoutKind(row["kind"]),
        "status": PayoutStatus(row["status"]),
        "tax_report": bool(row["tax_report"]),
    }
    return Payout(**values)


def table_state_json(table: TableState) -> str:
    """A table's live state as canonical JSON."""
    document = {
        "table_id": table.table_id,
        "online": table.online,
        "phase": str(table.phase),
        "round_id": table.round_id,
        "bets": [[seat, spot, amount] for (seat, spot), amount in sorted(table.bets.items())],
        "cards": {str(position): list(cards) for position, cards in sorted(table.cards.items())},
        "held_reason": table.held_reason,
    }
    return _canonical(document)


def table_state_from_json(text: str) -> TableState:
    """The inverse of :func:`table_state_json`."""
    document = json.loads(text)
    return TableState(
        table_id=document["table_id"],
        online=document["online"],
        phase=Phase(document["phase"]),
        round_id=document["round_id"],
        bets={(seat, spot): amount for seat, spot, amount in document["bets"]},
        cards={int(position): tuple(cards) for position, cards in document["cards"].items()},
        held_reason=document["held_reason"],
    )


def authority_json(authority: Authority) -> str:
    """How the ledger checks authority, as its ``meta`` row holds it."""
    return msgspec.json.encode(authority).decode()


def authority_from_json(text: str) -> Authority:
    """The inverse of :func:`authority_json`."""
    return msgspec.json.decode(text, type=Authority)


_SITES: Final = msgspec.json.Encoder(order="sorted")


def sites_json(sites: Mapping[str, LinkedSite]) -> str:
    """Central's linked properties (docs/wide-area.md), as their ``meta`` row holds them."""
    return _SITES.encode(dict(sites)).decode()


def sites_from_json(text: str) -> dict[str, LinkedSite]:
    """The inverse of :func:`sites_json`."""
    return msgspec.json.decode(text, type=dict[str, LinkedSite])


def chain_json(chain: SiteChain) -> str:
    """A property's link to central (docs/wide-area.md), as its ``meta`` row holds it."""
    return _SITES.encode(chain).decode()


def chain_from_json(text: str) -> SiteChain:
    """The inverse of :func:`chain_json`."""
    return msgspec.json.decode(text, type=SiteChain)


def binding_json(binding: JournalBinding) -> str:
    """The journal's identity and the signed events it applied, as its ``meta`` row holds them.

    The ids are sorted, so that one state has one text (snapshots and their digests).
    """
    document: dict[str, object] = {"journal": binding.journal, "applied": sorted(binding.applied)}
    if binding.accepted:  # only once a restore was accepted: earlier texts stay as they were
        document["accepted"] = sorted(binding.accepted)
    return _SITES.encode(document).decode()


class _BindingDocument(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    journal: str
    applied: list[str]
    accepted: list[tuple[int, str]] = []


def binding_from_json(text: str | bytes) -> JournalBinding:
    """The inverse of :func:`binding_json`."""
    document = msgspec.json.decode(text, type=_BindingDocument)
    return JournalBinding(
        document.journal, frozenset(document.applied), frozenset(document.accepted)
    )


def manifest_json(manifest: ApprovedManifest) -> str:
    """The approved manifest as its ``meta`` row holds it."""
    return json.dumps(
        {
            "version": manifest.version,
            "software": manifest.software,
            "configuration": manifest.configuration,
            "files": [list(item) for item in manifest.files],
            "by": manifest.by,
        },
        sort_keys=True,
    )


def manifest_from_json(text: str) -> ApprovedManifest:
    """The inverse of :func:`manifest_json`."""
    document = json.loads(text)
    files = tuple((path, digest) for path, digest in document["files"])
    return ApprovedManifest(
        document["version"], document["software"], document["configuration"], files, document["by"]
    )


def operator_row(operator: Operator) -> tuple[object, ...]:
    """An operator's ``operators`` columns after its name, but its ``seq``."""
    return (
        str(operator.role), operator.salt, operator.pin_hash, operator.kdf,
        operator.public_key, operator.failures, int(operator.locked),
    )  # fmt: skip
