"""Following the controller over MQTT: what an MQTT sign or display shows, in order.

:class:`MeterFollower` is the client side of ``meter/...`` (docs/mqtt.md): it subscribes to
what the shipped ACL lets a sign read, ``meter/#`` (or only its pools' meters and hits) and
``controller/+/status``, and turns what it hears back into the controller's own updates
(:mod:`controller.outputs`), for a sign's behaviour (:mod:`drivers.signs.behaviour`, through
:meth:`MeterFollower.updates`) or a display (:attr:`MeterFollower.meters`):

* ``meter/<pool>`` is a :class:`~controller.outputs.MeterUpdate`, applied only if its
  ``(epoch, seq)`` is above the highest applied for that pool
  (:class:`~controller.outputs.FollowerOrder`). A leader that lost its fence (a zombie) may
  wake and publish its last meters again, retained, after the new leader's; they are older
  by epoch, so they are dropped, counted in :attr:`MeterFollower.stale_dropped` and logged
  once. A payload without ``epoch`` (a controller before it) reads as epoch 0.
* ``meter/<pool>/hit`` and ``meter/_/hit`` are :class:`~controller.outputs.HitAnnouncement`,
  once per payout id (a hit is published at least once: again after a crash). Given keys, a
  hit is shown only signed by the controller, on its own pool's topic and fresh
  (:mod:`drivers.mqtt.hits`); the rest are counted in :attr:`MeterFollower.hits_refused`.
* ``meter/<pool>/status`` is a :class:`~controller.outputs.PoolUpdate`: the pool's wagers
  closed as a whole and why (a property's wide-area pool while its link to central is cut,
  docs/wide-area.md), or open again; ordered by ``(epoch, seq)`` as a meter is, and kept in
  :attr:`MeterFollower.statuses` for a display.
* ``controller/<id>/status`` is a :class:`~controller.outputs.ControllerUpdate`: the controller
  is online while any controller heard says ``online`` (the leader's broker carries the
  leader's status), offline once every one heard says ``offline``.

A payload that does not decode, or whose pool is not its topic's, is counted in
:attr:`MeterFollower.rejected` and logged; it never stops the follower.

**Signatures.** Given the controller's public keys (:class:`~controller.meter_signature.
MeterKeys`, ``[sign] controller_keys`` of a sign station), the follower checks the signature of
every meter and pool status *before* the order rule sees it: one unsigned, signed by another
key, or altered (anyone who can publish on ``meter/<pool>`` could otherwise show a fake amount,
and with a huge ``(epoch, seq)`` make every genuine meter after it look stale) is dropped,
counted in :attr:`MeterFollower.unverified` and logged at most once a minute. Without keys (a
rig's display) the follower believes what it hears, and says so once. A hit is checked as
well, and for more than its signature: its pool and its age (:mod:`drivers.mqtt.hits`).

**Brokers.** ``[broker] hosts`` lists the brokers (:meth:`BrokerSettings.addresses`); the
follower stays on one while it works and moves to the next when it fails, after the capped
backoff of every driver (:func:`controller.backoff.keep_connected`). One HAProxy address that
only routes to the leader's broker (``GET /leader``, docs/ha.md "Brokers and followers") is a
list of one. Its order survives the move: a broker that kept an older retained meter cannot
take the sign back. **Connection.** A fixed client id and a persistent session, so that hits
published while it was away are delivered when it is back; no last will (a sign has no status
topic of its own).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final

import aiomqtt

from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.errors import InputError
from controller.meter_signature import HIT_MAX_AGE_S, METER_DOMAIN, POOL_STATUS_DOMAIN
from controller.outputs import (
    ControllerUpdate,
    FollowerOrder,
    HitAnnouncement,
    MeterUpdate,
    PoolUpdate,
)
from drivers.mqtt.connection import (
    QOS,
    TIMEOUT_S,
    AckingClient,
    broker_failure,
    cancellations,
    check_granted,
    guarded,
    raise_if_cancelled,
    read_password,
    tls_context,
)
from drivers.mqtt.hits import HitCheck, HitRefusedError
from drivers.mqtt.json_objects import decode_object
from drivers.mqtt.outgoing import SIGNED_VERSIONS, meter_of, pool_status_of
from drivers.mqtt.payloads import OFFLINE, ONLINE
from drivers.mqtt.topics import NO_POOL, Topics

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Collection
    from pathlib import Path

    from controller.meter_signature import MeterKeys
    from controller.outputs import AnyUpdate
    from drivers.mqtt.settings import BrokerSettings

log = logging.getLogger(__name__)

UNVERIFIED_LOG_S: Final = 60.0
"""At most one log line per this many seconds about payloads dropped unverified."""


class UnverifiedError(InputError, ValueError):
    """A meter or pool status that is not the controller's: unsigned, or badly signed."""


class MeterFollower:
    """An MQTT sign's or display's feed of the controller (see the module docstring)."""

    def __init__(  # noqa: PLR0913 - the station, the displays and the rigs each set a few
        self,
        settings: BrokerSettings,
        *,
        client_id: str,
        pools: Collection[str] = (),
        backoff: Backoff | None = None,
        timeout_s: float = TIMEOUT_S,
        keys: MeterKeys | None = None,
        hit_max_age_s: float = HIT_MAX_AGE_S,
        hits_seen: Path | None = None,
    ) -> None:
        self.settings = settings
        self.keys = keys
        """The controller public keys the meters must be signed with (None: not checked)."""
        self.client_id = client_id
        self.name = f"mqtt-follower:{client_id}"
        self.addresses = settings.addresses()
        """The brokers, tried in turn."""
        self.pools = frozenset(pools)
        """The pools followed; none: every pool."""
        self.topics = Topics(settings.site)
        self.order = FollowerOrder(self.name)
        self.meters: dict[str, MeterUpdate] = {}
        """The newest meter applied per pool: what a display shows."""
        self.statuses: dict[str, PoolUpdate] = {}
        """Whether each pool heard of is open, and why not (a wide-area pool's link)."""
        self.controllers: dict[str, bool] = {}
        """Each controller heard, and whether it says it is online."""
        self.connected = False
        self.reconnects = 0
        self.rejected = 0
        """Payloads that did not decode, or named another pool than their topic."""
        self.unverified = 0
        """Meters and pool statuses dropped unsigned or badly signed, before the order rule."""
        self._unverified_logged: float | None = None
        self._unverified_since = 0
        self.last_error: str | None = None
        self.timeout_s = timeout_s
        self._index = 0
        self._backoff = backoff or Backoff(settings.backoff_initial_s, settings.backoff_cap_s)
        self._baseline = 0
        self.hits = HitCheck(self.name, keys, max_age_s=hit_max_age_s, seen=hits_seen)
        """The hits' checks: signed, their pool's, fresh, each payout once (across restarts,
        given ``hits_seen``: the file the payouts shown are kept in)."""
        self._online: bool | None = None
        self._waiting: deque[AnyUpdate] | None = None
        """What :meth:`updates` has still to hand over; None until it is asked for."""
        self._ready = asyncio.Event()
        if keys is None:
            log.warning("%s: no controller keys: meters are followed unsigned", self.name)

    @property
    def stale_dropped(self) -> int:
        """Meters older, by ``(epoch, seq)``, than one already applied: dropped."""
        return self.order.stale

    @property
    def hits_refused(self) -> int:
        """Hits never shown: unsigned, forged, another pool's, stale (replayed), undecodable."""
        return self.hits.refused

    @property
    def broker(self) -> tuple[str, int]:
        """The broker in use now (or tried next)."""
        return self.addresses[self._index]

    @property
    def filters(self) -> list[str]:
        """What the follower subscribes to."""
        prefix = self.topics.prefix
        status = f"{prefix}controller/+/status"
        if not self.pools:
            return [f"{prefix}meter/#", status]
        pools = sorted(self.pools)
        return [
            *(self.topics.meter(p) for p in pools),
            *(self.topics.hit(p) for p in pools),
            *(self.topics.pool_status(p) for p in pools),
            status,
        ]

    async def run(self) -> None:
        """Follow the brokers until cancelled."""
        self._baseline = baseline = cancellations()
        await keep_connected(
            self, self._backoff, before_attempt=lambda: raise_if_cancelled(baseline)
        )

    def updates(self) -> AsyncIterator[AnyUpdate]:
        """The updates applied from now on, in order, for one consumer (a sign's driver).

        Nothing is kept before this is called (a display reads :attr:`meters`), and a meter
        not yet taken is replaced by a newer one of its pool, so a slow consumer neither holds
        up the follower nor falls ever further behind.
        """
        if self._waiting is None:
            self._waiting = deque()
        return self._hand_over(self._waiting)

    async def _hand_over(self, waiting: deque[AnyUpdate]) -> AsyncIterator[AnyUpdate]:
        while True:
            while not waiting:
                self._ready.clear()
                await self._ready.wait()
            yield waiting.popleft()

    def _offer(self, update: AnyUpdate) -> None:
        waiting = self._waiting
        if waiting is None:
            return
        for index, queued in enumerate(waiting):
            if _supersedes(update, queued):
                del waiting[index]
                break
        waiting.append(update)
        self._ready.set()

    def take(self, topic: str, payload: bytes) -> AnyUpdate | None:
        """One message from the broker: the update it applies, or None (stale, repeated, bad)."""
        if not topic.startswith(self.topics.prefix):
            return None
        levels = topic[len(self.topics.prefix) :].split("/")
        try:
            match levels:
                case ["meter", pool]:
                    update: AnyUpdate | None = self._meter(pool, payload)
                case ["meter", pool, "hit"]:
                    update = self._hit(None if pool == NO_POOL else pool, payload)
                case ["meter", pool, "status"]:
                    update = self._pool_status(pool, payload)
                case ["controller", controller_id, "status"]:
                    update = self._status(controller_id, payload)
                case _:
                    return None
        except UnverifiedError as error:
            self._unverified(topic, error)
            return None
        except HitRefusedError:
            return None  # counted and logged by the hits' checks
        except InputError as error:
            self.rejected += 1
            log.warning("%s: %s refused: %s", self.name, topic, error)
            return None
        if update is not None:
            self._offer(update)
        return update

    def _meter(self, pool: str, payload: bytes) -> MeterUpdate | None:
        if not payload:  # a retained meter cleared by an operator
            return None
        meter = meter_of(self._verified(METER_DOMAIN, payload))
        if meter.pool != pool:
            raise InputError(f"the meter of pool {meter.pool!r} on pool {pool!r}'s topic")
        if not self.order.admits(f"meter/{pool}", meter.epoch, meter.seq):
            return None
        update = MeterUpdate(
            meter.at,
            meter.seq,
            meter.pool,
            meter.meter_cents,
            meter.reserve_cents,
            meter.overflow_cents,
            meter.seed_cents,
            epoch=meter.epoch,
            status=meter.status,
            status_reason=meter.status_reason,
            transferred_in_cents=meter.transferred_in_cents,
            transferred_from=meter.transferred_from,
            must_hit_by_cents=meter.must_hit_by_cents,
        )
        self.meters[pool] = update
        return update

    def _pool_status(self, pool: str, payload: bytes) -> PoolUpdate | None:
        if not payload:  # a retained status cleared by an operator
            return None
        status = pool_status_of(self._verified(POOL_STATUS_DOMAIN, payload))
        if status.pool != pool:
            raise InputError(f"the status of pool {status.pool!r} on pool {pool!r}'s topic")
        if not self.order.admits(f"pool/{pool}", status.epoch, status.seq):
            return None
        update = PoolUpdate(
            status.at, status.seq, status.pool, status.open, status.reason, epoch=status.epoch
        )
        self.statuses[pool] = update
        return update

    def _verified(self, domain: bytes, payload: bytes) -> dict[str, Any]:
        """The decoded payload, once its signature holds (if keys were given)."""
        value = decode_object(payload, SIGNED_VERSIONS)
        if self.keys is not None and (refusal := self.keys.refusal(domain, value)) is not None:
            raise UnverifiedError(refusal)
        return value

    def _unverified(self, topic: str, error: UnverifiedError) -> None:
        """Count a payload dropped unverified; log it, at most once a minute."""
        self.unverified += 1
        self._unverified_since += 1
        now = time.monotonic()
        if self._unverified_logged is not None and now - self._unverified_logged < UNVERIFIED_LOG_S:
            return
        log.warning(
            "%s: %s dropped, not the controller's: %s (%d dropped so since the last line, %d in "
            "all; further ones within %.0f s are only counted)",
            self.name, topic, error, self._unverified_since, self.unverified, UNVERIFIED_LOG_S,
        )  # fmt: skip
        self._unverified_logged = now
        self._unverified_since = 0

    def _hit(self, pool: str | None, payload: bytes) -> HitAnnouncement | None:
        hit = self.hits.admit(pool, payload)
        if hit is None:
            return None  # published again after a crash: shown once
        return HitAnnouncement(
            hit.at,
            hit.seq,
            hit.payout,
            hit.pool,
            hit.table,
            hit.seat,
            hit.line,
            hit.amount_cents,
            hit.pending,
            hit.tax_report,
            hit.hand,
            epoch=hit.epoch,
        )

    def _status(self, controller_id: str, payload: bytes) -> ControllerUpdate | None:
        if payload not in (ONLINE, OFFLINE):
            if payload:  # an empty retained status is a retired controller's, cleared
                raise InputError(f"controller status {payload[:16]!r} is not online or offline")
            self.controllers.pop(controller_id, None)
        else:
            self.controllers[controller_id] = payload == ONLINE
        online = any(self.controllers.values())
        if not self.controllers or online == self._online:
            return None
        self._online = online
        reason = "" if online else "every controller heard says offline"
        return ControllerUpdate(utc_now(), 0, online=online, reason=reason)

    # --- the connection (controller.backoff.Reconnecting) -----------------------------------

    def open_session(self) -> aiomqtt.Client:
        """A session with the current broker of the list (closed unanswered: failed at once)."""
        settings = self.settings.at(self.broker)
        return AckingClient(
            settings.host,
            settings.port,
            identifier=self.client_id,
            protocol=aiomqtt.ProtocolVersion.V311,
            clean_session=False,
            keepalive=settings.keepalive_s,
            username=settings.username,
            password=read_password(settings),
            tls_context=tls_context(settings.tls),
            timeout=self.timeout_s,
        )

    async def use_session(self, session: aiomqtt.Client) -> None:
        """Subscribe, then take every message until the connection fails."""
        raise_if_cancelled(self._baseline)
        filters = self.filters
        granted = await guarded(session.subscribe([(f, QOS) for f in filters]))
        check_granted(granted, filters)
        async for message in session.messages:
            payload = message.payload
            if isinstance(payload, bytes):
                self.take(message.topic.value, payload)

    def session_opened(self) -> None:
        """Connected."""
        self._backoff.reset()
        log.info("%s: connected to %s:%s", self.name, *self.broker)

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:  # noqa: ARG002
        """Broker and network failures are retried, on the next broker; others end the loop."""
        return broker_failure(error)

    def failed(self, what: str, error: Exception) -> None:
        """Record the failure and move on to the next broker of the list."""
        host, port = self.broker
        self.last_error = f"{host}:{port}: {what}: {error}"
        self._index = (self._index + 1) % len(self.addresses)
        log.warning("%s: %s; next %s:%s", self.name, self.last_error, *self.broker)

    def __repr__(self) -> str:
        return f"MeterFollower({self.name!r}, brokers {self.addresses})"


def _supersedes(update: AnyUpdate, queued: AnyUpdate) -> bool:
    """Whether ``update`` makes ``queued`` out of date: a newer state of the same pool."""
    if isinstance(update, MeterUpdate) and isinstance(queued, MeterUpdate):
        return update.pool_id == queued.pool_id
    if isinstance(update, PoolUpdate) and isinstance(queued, PoolUpdate):
        return update.pool_id == queued.pool_id
    return False
