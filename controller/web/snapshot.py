"""Everything the display page shows, as one JSON document (``/api/state``).

Read-only: it reads the ledger's state, the journal's read-only connection and what the
running parts report, and changes nothing. Besides the meters it says how fresh they are
(``stale``: since when and why the feed is not live), why each closed table is closed, whether
a table was ever heard from, and the health of every source (broker links, serial lines), so
that a supervisor across the pit can tell a quiet floor from a dead feed.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from controller.clock import utc_now
from controller.meter_signature import KEY_ID, METER_DOMAIN, SIGNED_VERSION, signed_bytes
from controller.outputs import MeterUpdate
from controller.runtime.updates import pool_life
from controller.web.floor import FloorWatch
from controller.web.pays import cards, line_label, pay_label, wager_label

if TYPE_CHECKING:
    from collections.abc import Callable

    from controller.journal.reads import PayoutRecord
    from controller.runtime.metrics import ControllerMetrics
    from controller.runtime.view import Runtime
    from controller.security.signer import Signer
    from controller.web.meter_signatures import MeterSignatures

HITS_SHOWN = 25


def meter_bytes(key_id: str, update: MeterUpdate) -> bytes:
    """What the controller signs for a meter: a signed ``meter/<pool>`` payload's fields.

    The fields are a signed ``meter/<pool>`` payload's (controller/meter_signature.py); the page
    verifies the signature over the meter domain and the text after it with the public key the
    server put in it, and shows only what that text says, so it needs no canonical JSON of its own.
    """
    fields = {
        "v": SIGNED_VERSION,
        "pool": update.pool_id,
        "meter_cents": update.meter_cents,
        "reserve_cents": update.reserve_cents,
        "overflow_cents": update.overflow_cents,
        "seed_cents": update.seed_cents,
        "at": update.at,
        "seq": update.seq,
        "epoch": update.epoch,
        KEY_ID: key_id,
    }
    # A pool's life is signed with its meter, but only when set: a pool in play signs the
    # very bytes it always did (tests/web/test_display_signed_meters.py).
    fields |= {name: getattr(update, name) for name in update_fields(update)}
    return signed_bytes(METER_DOMAIN, fields)


LIFE = (
    "status", "status_reason", "transferred_in_cents", "transferred_from", "must_hit_by_cents"
)  # fmt: skip
"""The fields of a pool's life (and a mystery level's ceiling) a meter carries when set
(controller/outputs.py MeterUpdate)."""


def update_fields(update: MeterUpdate) -> set[str]:
    """The fields of a pool's life that ``update`` sets."""
    return {name for name in LIFE if getattr(update, name) is not msgspec.UNSET}


def page_signature(data: bytes, signature: str) -> dict[str, str]:
    """A meter as the page checks it: the signed text of its fields and the signature."""
    return {"body": data[len(METER_DOMAIN) :].decode(), "sig": signature}


def signed_meter(key: Signer, update: MeterUpdate) -> dict[str, str]:
    """A meter signed in place by a key in the process (the display awaits its signatures)."""
    data = meter_bytes(key.key_id, update)
    return page_signature(data, key.sign(data))


async def signed_meter_async(
    signatures: MeterSignatures, key_id: str, update: MeterUpdate
) -> dict[str, str] | None:
    """:func:`signed_meter` awaited (controller/web/meter_signatures.py); None: not signed."""
    data = meter_bytes(key_id, update)
    signature = await signatures.signature(data)
    return None if signature is None else page_signature(data, signature)


def controller_key(runtime: Runtime) -> Signer | None:
    """The key the controller signs with (its checkpoints' key)."""
    schedule = runtime.sequencer.checkpoints
    return schedule.key if schedule is not None else None


class PageState:
    """Builds the page's document from the running controller."""

    def __init__(self, runtime: Runtime, clock: Callable[[], str] = utc_now) -> None:
        self.runtime = runtime
        self._clock = clock
        self.watch = FloorWatch(self.feed_trouble, clock)
        # Taken before the sequencer runs (the service builds the display first): the tables
        # ever heard from in the journal, and where the liveness monitor's marks start, so
        # that a mark that moved is a sign of life in this run.
        self._heard_before = {table for table, _device in runtime.journal.device_highs()}
        liveness = runtime.liveness
        self._first_marks = dict(liveness.last_seen) if liveness is not None else {}

    def feed_trouble(self) -> list[str]:
        """Why the meters are not live now: the controller or a broker link feeding it is down."""
        sequencer = self.runtime.sequencer
        trouble = []
        if sequencer.failed_reason is not None:
            trouble.append(f"the journal cannot be written: {sequencer.failed_reason}")
        elif not sequencer.available:
            trouble.append("the controller is stopping")
        metrics = self.runtime.metrics
        if metrics is not None:
            trouble += [
                f"{view.noun} {view.link.name} down"
                for view in metrics.links
                if view.feeds_meters and not view.link.connected
            ]
        return trouble

    def snapshot(self) -> dict[str, Any]:
        """The document."""
        runtime = self.runtime
        journal = runtime.journal
        state = journal.state
        now = self._clock()
        trouble = self.watch.observe()
        # The row the state is at: every meter below is at least as new as (epoch, seq), so
        # the page drops a streamed update older than this, and this if it is older than one
        # the page has shown (controller/outputs.py FollowerOrder).
        epoch, seq = journal.epoch, journal.head[0]
        return {
            "at": now,
            "stale": {"since": self.watch.live_at, "reasons": trouble} if trouble else None,
            "controller": {
                "id": runtime.controller_id,
                "online": runtime.sequencer.available,
                "reason": runtime.sequencer.failed_reason or "",
                "rows": journal.committed_seq(),
                "epoch": epoch,
                "seq": seq,
                "started_at": self.watch.started_at,
            },
            "pools": [
                {
                    "pool": pool_id,
                    "paytable": pool.terms.paytable,
                    "meter_cents": pool.meter_cents,
                    "reserve_cents": pool.reserve_cents,
                    "overflow_cents": pool.overflow_cents,
                    "seed_cents": pool.terms.seed_cents,
                    "hits": pool.hits_count,
                    "epoch": epoch,
                    "seq": seq,
                    **pool_life(pool, state),
                }
                for pool_id, pool in sorted(state.pools.items())
            ],
            "pending": self._pending(now),
            "tables": [self._table(table_id) for table_id in sorted(state.tables)],
            "hits": [
                {
                    "payout_id": hit.payout_id,
                    "at": hit.at,
                    "pool_id": hit.pool_id,
                    "table_id": hit.table_id,
                    "seat": hit.seat,
                    "line": hit.line,
                    "label": line_label(hit.line),
                    "win_cents": hit.win_cents,
                }
                for hit in journal.hits(newest_first=True, limit=HITS_SHOWN)
            ],
            "sources": _sources(runtime.metrics),
            "signs": [
                {"name": sign.name, "text": sign.text, "changed_at": sign.changed_at}
                for sign in runtime.faces
            ],
        }

    async def signed_snapshot(self, signatures: MeterSignatures | None) -> dict[str, Any]:
        """The document, each pool's meter with the controller's signature, awaited.

        The signatures are asked for together: a signer that does not answer holds the answer
        up for its one timeout, not once per pool, and never the event loop; a meter it did not
        sign goes without (the page keeps what it showed).
        """
        document = self.snapshot()
        key = controller_key(self.runtime)
        if signatures is None or key is None:
            return document
        pools = document["pools"]
        signed = await asyncio.gather(
            *(signed_meter_async(signatures, key.key_id, _meter_of(document, p)) for p in pools)
        )
        for pool, signature in zip(pools, signed, strict=True):
            if signature is not None:
                pool["signed"] = signature
        return document

    def _pending(self, now: str) -> list[dict[str, Any]]:
        """The pays awaiting a supervisor's verification, oldest first."""
        records = self.runtime.journal.verification_records(pending_only=True)
        return [_pending_row(record, now) for record in sorted(records, key=_by_seq)]

    def _table(self, table_id: str) -> dict[str, Any]:
        runtime = self.runtime
        live = runtime.journal.state.table_states.get(table_id)
        liveness = runtime.liveness
        heard_now = liveness is not None and liveness.last_seen.get(
            table_id
        ) != self._first_marks.get(table_id)
        seconds = liveness.seconds_since(table_id) if liveness is not None else None
        online = (live is None or live.online) and runtime.sequencer.available
        return {
            "table": table_id,
            "online": online,
            "phase": str(live.phase) if live else "betting",
            "round_id": live.round_id if live else None,
            "held_reason": live.held_reason if live else "",
            "seconds_since": seconds,
            "heard_s": seconds if heard_now else None,
            "ever_heard": heard_now or table_id in self._heard_before,
            "closed": None if online else self._why_closed(table_id),
        }

    def _why_closed(self, table_id: str) -> dict[str, Any]:
        """Since when and why a table is closed (``since`` None: since before this start)."""
        sequencer = self.runtime.sequencer
        if not sequencer.available:
            down = self.watch.controller_down
            if sequencer.failed_reason is None:
                return {"since": down.at if down else None, "why": "the controller is stopping"}
            # The sequencer fails closed before its news reaches the watch through the stream.
            return {
                "since": down.at if down else sequencer.failed_at,
                "why": f"closed by the controller failing closed: {sequencer.failed_reason}",
            }
        closure = self.watch.closures.get(table_id)
        if closure is None:
            return {"since": None, "why": "offline when the controller started"}
        liveness = self.runtime.liveness
        timed_out = liveness is not None and table_id in liveness.timed_out
        why = f"heartbeat timeout: {closure.reason}" if timed_out else f"offline: {closure.reason}"
        return {"since": closure.at, "why": why}


def _meter_of(document: dict[str, Any], pool: dict[str, Any]) -> MeterUpdate:
    """The meter a pool's entry of the document shows, as the controller signs it."""
    return MeterUpdate(
        document["at"],
        pool["seq"],
        pool["pool"],
        pool["meter_cents"],
        pool["reserve_cents"],
        pool["overflow_cents"],
        pool["seed_cents"],
        epoch=pool["epoch"],
        **{name: pool[name] for name in LIFE if name in pool},
    )


def _by_seq(record: PayoutRecord) -> int:
    return record.seq


def _pending_row(record: PayoutRecord, now: str) -> dict[str, Any]:
    payout = record.payout
    return {
        "payout_id": payout.payout_id,
        "at": record.at,
        "age_s": max(0.0, _seconds_between(record.at, now)),
        "label": pay_label(payout),
        "table_id": payout.table_id,
        "seat": payout.seat,
        "wager": wager_label(payout),
        "line": line_label(payout.line),
        "jackpot": payout.from_meter_cents > 0,
        "pool_id": payout.pool_id,
        "win_cents": payout.win_cents,
        "hand": payout.hand,
        "cards": cards(payout.hand),
        "tax_report": payout.tax_report,
    }


def _seconds_between(earlier: str, later: str) -> float:
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()


def _sources(metrics: ControllerMetrics | None) -> list[dict[str, Any]]:
    """Every driver's connection (broker links, serial lines) and source, and whether it works."""
    if metrics is None:
        return []
    rows: dict[str, dict[str, Any]] = {}
    for view in metrics.links:  # each in its driver's words (controller.plugins.LinkView)
        link = view.link
        rows[link.name] = {
            "name": link.name,
            "kind": view.kind,
            "ok": link.connected,
            "state": view.up if link.connected else "down",
            "reconnects": link.reconnects,
        }
    for source in metrics.sources:
        row = rows.setdefault(
            source.name,
            {"name": source.name, "kind": "source", "ok": True, "state": "ok", "reconnects": 0},
        )
        trouble = source.health.trouble
        if trouble is not None:
            state = trouble if row["ok"] else f"{row['state']} · {trouble}"
            row |= {"ok": False, "state": state}
    return list(rows.values())
