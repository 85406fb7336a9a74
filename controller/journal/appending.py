"""A group commit's work that no database does: recording the events and making their rows.

Every backend of :class:`controller.journal.port.JournalPort` appends the same way, so that
the same events give the same rows, hashes, receipts and materialized state wherever they
are kept (docs/journal.md, docs/ha.md). :func:`append_events` records a batch: it screens
each event (the backend's refusals), answers the ids journaled before (a duplicate gets its
first receipt, an id reused for other content becomes a ``sequence-reused`` fault), has the
domain's step apply each new one, and makes its row from what the step returned: its
canonical columns, its hash chained to the one before, and its stored (compact) form. After a
row refused at a live append it writes the domain's alert on it, if the domain gives one (a
cloned passkey's proof, :meth:`controller.journal.domain.Domain.clone_evidence`).
:func:`changed_rows` gives each row of the materialized state the batch changed, once, as the
batch left it, in the domain's encodings. The backend writes both in one transaction of its
own.

The domain is handed in by the layer above (:mod:`controller.journal.domain`): this module
imports nothing of the ledger (the import-linter contract in ``pyproject.toml``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic

from controller.effects import PayoutMade, Verified, encode_effects
from controller.events import encode_event
from controller.journal.batch import Batch
from controller.journal.chain import row_hash
from controller.journal.devices import DeviceHighs
from controller.journal.domain import State
from controller.journal.identity import conflict_fault, same_event
from controller.journal.rows import stored_row
from controller.journal.site_messages import Outboxed, queued_rows
from controller.ports import APPLIED, INTERNAL_ERROR, REJECTED, Receipt

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.events import AnyEvent
    from controller.journal.domain import Domain, Screen
    from controller.journal.rows import Row

log = logging.getLogger(__name__)

Known = dict[str, tuple[Receipt, str]]
"""Event ids the journal holds: the receipt (``duplicate=True``) and the event's text of each."""


def known_receipt(row: Row) -> tuple[Receipt, str]:
    """What a journaled row answers a resend of its event with, and the event's text."""
    values = row.values
    receipt = Receipt(
        values["seq"], values["event_id"], values["outcome"], values["reason"],
        row.effects or (), duplicate=True,
    )  # fmt: skip
    return receipt, values["event"]


def payout_columns(effect: PayoutMade, seq: int, at: str) -> dict[str, Any]:
    """The ``payouts`` row of a payout effect journaled at row ``seq``."""
    row: dict[str, Any] = {name: getattr(effect, name) for name in effect.__struct_fields__}
    row |= {"seq": seq, "at": at, "tax_report": int(effect.tax_report)}
    return row | {"verified_by": None, "verified_seq": None}


@dataclass(slots=True)
class Appended(Generic[State]):
    """A batch applied: the rows to insert and what the journal's state becomes."""

    state: State
    tail: tuple[int, str]
    batch: Batch[State]
    receipts: list[Receipt] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    """Each new row as written (:data:`controller.journal.rows.WRITTEN`): stored, provenance."""
    devices: DeviceHighs = field(default_factory=DeviceHighs)


def append_events(  # noqa: PLR0913 - what an append is, and the clock of a live one
    events: Sequence[AnyEvent],
    state: State,
    tail: tuple[int, str],
    lookup: Callable[[Sequence[str]], Known],
    origins: Sequence[str | None],
    *,
    domain: Domain[State],
    screen: Screen[State],
    now: str | None = None,
) -> Appended[State]:
    """Record ``events`` after row ``tail`` on ``state``; ``lookup`` finds journaled ids.

    ``origins``: who wrote each event, written beside its new row
    (:func:`controller.journal.provenance.each_provenance`). ``domain`` applies each new event
    (:class:`controller.journal.domain.Domain`); ``screen`` first refuses what its writer may
    not journal (a table's word from another writer than the daemon's intake on a signed
    journal, a signed event late at a live append, a table agent's missing word:
    :meth:`controller.journal.domain.Domain.screen`), journaling the fault that says why
    instead. ``now``: the controller's clock at a live append; None: not checked (a replay, a
    copy, an in-process writer that gives no clock).
    """
    known = lookup([event.event_id for event in events])
    done = Appended(state, tail, Batch(state))
    signed = domain.signed(state)  # as the append finds it: a replay into a new file runs
    for event, origin in zip(events, origins, strict=True):
        refused = screen(signed, done.state, event, origin, now)
        if refused is not None:
            event = refused.fault  # noqa: PLW2901
        seen = known.get(event.event_id)
        conflict = seen is not None and not same_event(seen[1], event)
        if seen is not None and conflict:
            event = conflict_fault(seen[0].seq, seen[1], event)  # noqa: PLW2901
            seen = known.get(event.event_id) or lookup([event.event_id]).get(event.event_id)
        if seen is None:
            receipt = _record(done, known, domain, event, origin)
            live_refusal = now is not None and receipt.outcome == REJECTED
            alert = _alert(domain, done.state, event) if live_refusal else None
            if alert is not None and not _journaled(alert, known, lookup):
                _record(done, known, domain, alert, origin)
        else:
            receipt = seen[0]
        if refused is not None:
            receipt = replace(receipt, outcome=REJECTED, reason=refused.reason, effects=())
        done.receipts.append(replace(receipt, conflict=True) if conflict else receipt)
    return done


def _record(
    done: Appended[State], known: Known, domain: Domain[State], event: AnyEvent, origin: str | None
) -> Receipt:
    """Write one new event's row into ``done``: its receipt."""
    done.state, done.tail, receipt, row, text = _write(domain, done.state, done.tail, event)
    done.rows.append((*row, origin))
    done.batch.add(receipt, event, done.state)
    done.devices.note(event)
    # A second copy later in this batch is a duplicate of this one.
    known[event.event_id] = (replace(receipt, duplicate=True), text)
    return receipt


def _alert(domain: Domain[State], state: State, refused: AnyEvent) -> AnyEvent | None:
    """The domain's alert on ``refused`` (a cloned passkey's proof), to journal right after it.

    It is written as any event is, at a live append, once (:func:`_journaled`), with no
    receipt of its own: the writer is answered for what it submitted. A fault in the domain's
    judgement of it journals no alert rather than stopping the append.
    """
    try:
        return domain.clone_evidence(state, refused)
    except Exception:
        log.exception("the ledger failed on the clone evidence of %s", refused.event_id)
        return None


def _journaled(event: AnyEvent, known: Known, lookup: Callable[[Sequence[str]], Known]) -> bool:
    """Whether ``event``'s id is journaled, before or earlier in this batch."""
    return event.event_id in known or bool(lookup([event.event_id]))


def _write(
    domain: Domain[State], state: State, tail: tuple[int, str], event: AnyEvent
) -> tuple[State, tuple[int, str], Receipt, tuple[Any, ...], str]:
    """Apply one event: the new state and tail, its receipt, its stored row, its text.

    The domain's step applies it (a refusal leaves the state as it was); the hash
    covers the row's canonical text; the store keeps its compact form
    (:mod:`controller.journal.rows`).
    """
    try:
        new_state, effects, refused = domain.step(state, event)
    except Exception as error:
        # A fault in the ledger itself, which the event found. The ledger is pure, so the
        # state is as it was: the event is refused and journaled like any refusal, and
        # whoever sent it is answered, instead of the exception stopping the sequencer
        # and the source receiving the same event again for ever.
        log.exception("the ledger failed on %s", event.event_id)
        new_state, effects = state, ()
        refused = f"{INTERNAL_ERROR}: {type(error).__name__}: {error}"
    outcome, reason = (APPLIED, "") if refused is None else (REJECTED, refused)
    seq = tail[0] + 1
    row: dict[str, Any] = {
        "seq": seq,
        "event_id": event.event_id,
        "kind": type(event).__struct_config__.tag,
        "at": event.at,
        "event": encode_event(event).decode(),
        "outcome": outcome,
        "reason": reason,
        "effects": encode_effects(effects).decode(),
    }
    row["prev_hash"] = tail[1]
    row["hash"] = row_hash(tail[1], row)
    receipt = Receipt(seq, event.event_id, outcome, reason, effects)
    stored = stored_row(row, event, tuple(effects))
    return new_state, (seq, row["hash"]), receipt, stored, row["event"]


Upsert = tuple[str, tuple[str, ...], tuple[str, ...], list[tuple[Any, ...]]]
"""A table, its key columns, its value columns, and rows of keys then values."""


@dataclass(slots=True)
class Changed:
    """The materialized state's rows a batch changed, each once, as the batch left it."""

    upserts: list[Upsert] = field(default_factory=list)
    rounds_closed: list[tuple[str, str]] = field(default_factory=list)
    operators_removed: list[str] = field(default_factory=list)
    payouts: list[dict[str, Any]] = field(default_factory=list)
    """New ``payouts`` rows, in the order of the events that made them."""
    verified: list[tuple[str, int, str]] = field(default_factory=list)
    """Payouts verified: who, at which row, which payout (after the inserts, in order)."""
    site_messages: list[Outboxed] = field(default_factory=list)
    """New ``site_messages`` rows (the outbox to central), in ``site_seq`` order."""

    @property
    def writes(self) -> list[Upsert]:
        """The upserts that have rows."""
        return [upsert for upsert in self.upserts if upsert[3]]


def changed_rows(batch: Batch[State], new: State, domain: Domain[State]) -> Changed:
    """What the batch changed in the materialized state, in ``domain``'s encodings."""
    changed = Changed()
    old = batch.start
    _payouts(batch, changed)
    changed.site_messages = queued_rows(batch.queued)
    if new is old:
        return changed
    pools = [
        (key, domain.pool_json(pool), seq) for key, pool, seq in batch.changed("pools", new.pools)
    ]
    tables = [
        (key, encode_event(config).decode(), seq)
        for key, config, seq in batch.changed("table_events", new.table_events)
    ]
    live = [
        (key, domain.table_state_json(state), seq)
        for key, state, seq in batch.changed("table_states", new.table_states)
    ]
    changed.upserts += [
        ("pools", ("pool_id",), ("state", "seq"), pools),
        ("tables", ("table_id",), ("config", "seq"), tables),
        ("table_states", ("table_id",), ("state", "seq"), live),
    ]
    if new.rounds is not old.rounds:
        rounds = [
            (key[0], key[1], domain.wagers_json(wagers))
            for key, wagers in new.rounds.items()
            if old.rounds.get(key) is not wagers
        ]
        changed.upserts.append(("rounds", ("table_id", "round_id"), ("wagers",), rounds))
        changed.rounds_closed = list(old.rounds.keys() - new.rounds.keys())
    meta = []
    if new.revision != old.revision:
        meta.append(("revision", str(new.revision)))
    if new.manifest is not old.manifest and new.manifest is not None:
        meta.append(("manifest", domain.manifest_json(new.manifest)))
    if new.authority != old.authority:
        meta.append(("authority", domain.authority_json(new.authority)))
    if new.sites is not old.sites:
        meta.append(("sites", domain.sites_json(new.sites)))
    if new.chain is not old.chain and new.chain is not None:
        meta.append(("chain", domain.chain_json(new.chain)))
    if new.binding is not old.binding and new.binding is not None:
        meta.append(("binding", domain.binding_json(new.binding)))
    changed.upserts.append(("meta", ("key",), ("value",), meta))
    if new.operators is not old.operators:
        changed.operators_removed = list(old.operators.keys() - new.operators.keys())
        operators = [
            (name, *domain.operator_row(operator), seq)
            for name, operator, seq in batch.changed("operators", new.operators)
        ]
        columns = ("role", "salt", "pin_hash", "kdf", "public_key", "failures", "locked", "seq")
        changed.upserts.append(("operators", ("name",), columns, operators))
    return changed


def _payouts(batch: Batch[State], changed: Changed) -> None:
    """Payouts and their verifications, in the order of the events that made them."""
    for receipt, event in batch.paying:
        for effect in receipt.effects:
            if isinstance(effect, PayoutMade):
                changed.payouts.append(payout_columns(effect, receipt.seq, event.at))
            elif isinstance(effect, Verified):
                changed.verified.append((effect.by, receipt.seq, effect.payout_id))
