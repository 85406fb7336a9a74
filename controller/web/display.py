"""The supervisors' meter display and the ops endpoints, served by the daemon (aiohttp).

| path | what |
|---|---|
| ``/`` | the display page: live meters (greyed when stale), pending pays, tables, hits, health |
| ``/events`` | server-sent events: every update as it is published (meters coalesced) |
| ``/api/state`` | the whole display state as JSON |
| ``/metrics`` | Prometheus metrics |
| ``/healthz`` | 200 when the journal is writable and every source works, else 503 |
| ``/leader`` | 200 with this node, its epoch and last row while it sequences, else 503 |
| ``/console/`` | the supervisors' console, with an operator socket (controller/web/console.py) |

The page is self-contained (no external assets) so that it works on an isolated floor network,
and read-only: nothing here changes a meter. At most ``[web] max_streams`` ``/events`` streams
are open at once; more are answered 503 with a ``Retry-After``, so that pages left open (or a
client opening streams in a loop) cannot use up the daemon's sockets and starve ``/healthz``
and ``/metrics`` (docs/faults.md, "Too many display streams"). When the service stops, every
open stream is ended at once: pages left open all day must not hold the stop past systemd's
``TimeoutStopSec``.

``/leader`` is what a load balancer in front of several controller nodes asks (HAProxy's
``option httpchk GET /leader``): only the node whose sequencer runs on a writable journal
answers 200, so agents, signs and displays are sent to the leader's broker and page
(docs/ha.md, "Brokers and followers").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from aiohttp import web

from controller.outputs import MeterUpdate
from controller.runtime.metrics import StreamCounts
from controller.web.console import Console, ConsoleOff, ConsoleSite
from controller.web.gate import SWEEP_S, Gate, GateMetrics
from controller.web.listener import Listener
from controller.web.meter_signatures import MeterSignatures
from controller.web.policy import PAGE, secure
from controller.web.snapshot import PageState, controller_key, signed_meter_async
from controller.web.throttle import LogThrottle, QuietLoopErrors, QuietRecords

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from prometheus_client import CollectorRegistry

    from controller.outputs import AnyUpdate
    from controller.runtime.view import Runtime
    from controller.web.limits import WebLimits

KEEPALIVE_S = 15.0
STOP_GRACE_S = 2.0
"""How long a stop waits for requests still being answered (streams are ended at once)."""
RETRY_AFTER_S = 30
"""What a stream refused at the cap is told to wait (the page itself retries after this)."""
_JSON = msgspec.json.Encoder()
KEY_META = '<meta name="controller-key" content="%s">'
"""Where the page is given the controller's public key (outside its script: the CSP's digests
of the script do not change with the key)."""
log = logging.getLogger(__name__)


class Display:
    """The web endpoints over the live controller."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        max_streams: int,
        node: str | None = None,
        operator_socket: Path | None = None,
        console_site: ConsoleSite | None = None,
    ) -> None:
        self.runtime = runtime
        self.operator_socket = operator_socket
        """Where the console hands its signed actions (the CLI's door); None: no console."""
        self.console_site = console_site
        """The console's relying party (controller/web/console.py); None: no secure context,
        and ``/console/`` says so."""
        self.node = node or runtime.controller_id
        """This node's name in ``/leader`` (the fence's ``[controller] node``; the id if none)."""
        self.broadcast = runtime.broadcast
        self.sequencer = runtime.sequencer
        self.metrics = runtime.metrics
        self.page = PageState(runtime)
        self.key = controller_key(runtime)
        """The controller's key: the page is given its public half, each meter its signature."""
        self.signatures = MeterSignatures(self.key) if self.key is not None else None
        """The meters' signatures, awaited: a stalled signer never holds up the event loop."""
        self.streams = StreamCounts(cap=max_streams)
        self._refusing = False
        self._stopping = False
        self._open_streams: set[asyncio.Task[Any]] = set()
        if self.metrics is not None:
            self.metrics.streams = self.streams

    @property
    def registry(self) -> CollectorRegistry | None:
        """Where the web port's own metrics join the controller's."""
        return self.metrics.registry if self.metrics is not None else None

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application()
        app.on_shutdown.append(self.end_streams)
        app.cleanup_ctx.append(self._following)
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/events", self.events),
                web.get("/api/state", self.state),
                web.get("/metrics", self.prometheus),
                web.get("/healthz", self.health),
                web.get("/leader", self.leader),
            ]
        )
        if self.operator_socket is not None:
            site = self.console_site
            if site is None:
                log.warning(
                    "console: not served, its passkeys need a secure context: set [web] "
                    "tls_cert, tls_key and console_rp_id, or bind the port to localhost"
                )
            console = (
                ConsoleOff() if site is None else Console(self.page, self.operator_socket, site)
            )
            app.router.add_get("/console", console.to_page)
            app.add_subapp("/console", console.app())
        return app

    async def index(self, _: web.Request) -> web.Response:
        """The display page."""
        public = self.key.public_key if self.key is not None else ""
        page = PAGE.replace(KEY_META % "", KEY_META % public, 1)
        return web.Response(text=page, content_type="text/html", charset="utf-8")

    async def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, its meters signed (controller/web/snapshot.py)."""
        return await self.page.signed_snapshot(self.signatures)

    async def _following(self, _: web.Application) -> AsyncIterator[None]:
        """While the server runs, the page's watch follows the published updates."""
        subscription = self.broadcast.subscribe()
        follower = asyncio.create_task(self.page.watch.follow(subscription))
        try:
            yield
        finally:
            follower.cancel()
            subscription.close()
            with contextlib.suppress(asyncio.CancelledError):
                await follower

    async def state(self, _: web.Request) -> web.Response:
        """The display state as JSON."""
        return web.json_response(await self.snapshot())

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events, up to the cap of open streams; 503 beyond it."""
        streams = self.streams
        if self._stopping:
            raise web.HTTPServiceUnavailable(text="503 the controller is stopping\n")
        if streams.open >= streams.cap:
            return self._refuse_stream()
        streams.open += 1
        task = asyncio.current_task()
        if task is not None:
            self._open_streams.add(task)
        try:
            return await self._stream(request)
        finally:
            self._open_streams.discard(task)
            streams.open -= 1
            # Logged again only once the streams have fallen well below the cap, so that
            # clients hovering at the cap cannot fill the log.
            if streams.open <= streams.cap // 2:
                self._refusing = False

    async def end_streams(self, _: web.Application) -> None:
        """End every open stream as the server shuts down (aiohttp's ``on_shutdown``).

        A stream never ends by itself; left to aiohttp's graceful shutdown, each open page
        would hold the stop for its full timeout, past systemd's ``TimeoutStopSec``.
        Cancelling a stream's loop ends its response cleanly (the page sees the stream close
        and reconnects to whatever serves next).
        """
        self._stopping = True
        for task in list(self._open_streams):
            task.cancel()

    def _refuse_stream(self) -> web.Response:
        streams = self.streams
        streams.refused += 1
        if not self._refusing:
            self._refusing = True
            log.warning(
                "display: %d /events streams open, the [web] max_streams cap: "
                "further streams are refused (jackpotd_display_streams_refused_total)",
                streams.open,
            )
        return web.Response(
            status=503,
            text=f"503 too many live display streams: {streams.open} of {streams.cap} open "
            f"([web] max_streams). Try again in {RETRY_AFTER_S} s.\n",
            headers={"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"},
        )

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        """One update per event, with a keep-alive comment when idle."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        subscription = self.broadcast.subscribe()
        updates = aiter(subscription)
        try:
            while not self._stopping:
                try:
                    # Not asyncio.wait_for: on Python 3.11 it swallows a cancellation that
                    # arrives as an update does, and the stream would outlive the stop.
                    async with asyncio.timeout(KEEPALIVE_S):
                        update = await anext(updates)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                encoded = await self._encoded(update)
                if encoded is None:
                    continue  # its signature was not had in time: the next meter will be
                kind = type(update).__struct_config__.tag
                await response.write(b"event: %s\ndata: %s\n\n" % (str(kind).encode(), encoded))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            subscription.close()
        return response

    async def _encoded(self, update: AnyUpdate) -> bytes | None:
        """An update as the stream sends it: a meter with its signature for the page.

        The signature is awaited, never waited for on the event loop (controller/web/
        meter_signatures.py); None: a meter the signer did not sign in time, not sent.
        """
        if not isinstance(update, MeterUpdate) or self.key is None or self.signatures is None:
            return _JSON.encode(update)
        signed = await signed_meter_async(self.signatures, self.key.key_id, update)
        if signed is None:
            return None
        return _JSON.encode({**msgspec.to_builtins(update), "signed": signed})

    async def prometheus(self, request: web.Request) -> web.Response:
        """Prometheus exposition, in the format the scraper's ``Accept`` asks for."""
        if self.metrics is None:
            raise web.HTTPNotFound
        body, content_type = self.metrics.exposition(request.headers.get("Accept", ""))
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def health(self, _: web.Request) -> web.Response:
        """Liveness for load balancers and monitors: the journal, and every source.

        503 while the journal fails closed, and while a source keeps failing (a broker it
        cannot reach, a port it cannot open, a message it fails on again and again): a floor
        whose tables cannot be heard is not healthy, even if the journal is.
        """
        ok = self.sequencer.available
        reason = self.sequencer.failed_reason or ""
        sources = {}
        for source in self.metrics.sources if self.metrics is not None else ():
            trouble = source.health.trouble
            sources[source.name] = trouble or "ok"
            if trouble is not None and ok:
                ok, reason = False, f"source {source.name} {trouble}"
        body = {"ok": ok, "reason": reason, "sources": sources}
        return web.json_response(body, status=200 if ok else 503)

    async def leader(self, _: web.Request) -> web.Response:
        """200 while this node sequences; 503 and why otherwise.

        It sequences while its sequencer runs, its journal is writable, and the journal's
        fence is still its own (:attr:`JournalPort.leading`). On a shared journal the
        sequencer steps down (and the process ends) the moment a commit or a lease renewal
        finds another node's epoch, and fails closed while the journal cannot be written;
        between the two, a process paused past its lease knows by its own clock that it may
        no longer lead. An SQLite file has one writer and no fence. Sources do not count here
        (``/healthz`` says whether the floor is heard): a leader with a broken link is still
        the leader.
        """
        journal = self.runtime.journal
        body: dict[str, object] = {
            "node": self.node,
            "controller": self.runtime.controller_id,
            "epoch": journal.epoch,
            "seq": journal.head[0],
        }
        sequencer = self.sequencer
        if sequencer.available and journal.leading:
            return web.json_response(body, headers={"Cache-Control": "no-store"})
        if not journal.leading:
            body["reason"] = "the sequencer's lease has run out: another node may lead"
        else:
            body["reason"] = sequencer.failed_reason or "the controller is stopping"
        return web.json_response(body, status=503, headers={"Cache-Control": "no-store"})


class Served(Protocol):
    """What :func:`serve_display` serves: the display, or a standby's page."""

    @property
    def registry(self) -> CollectorRegistry | None:
        """Where the web port's metrics go (None: nowhere)."""
        ...

    def app(self) -> web.Application:
        """The aiohttp application."""
        ...


async def serve_display(
    display: Served, limits: WebLimits, started: asyncio.Event | None = None
) -> None:
    """Serve until cancelled, every connection through the gate (controller/web/gate.py)."""
    throttle = LogThrottle(log)
    gate = Gate(limits, throttle)
    app = display.app()
    app.middlewares.append(gate.middleware)
    app.on_response_prepare.append(secure)
    # A client that goes away ends its handler at once: a closed page's stream frees its place
    # under the cap now, not at its next keep-alive. aiohttp's own keep-alive timer is a
    # backstop to the gate's, a little later so that the gate's count is the one that counts.
    runner = web.AppRunner(
        app,
        access_log=None,
        handler_cancellation=True,
        shutdown_timeout=STOP_GRACE_S,
        keepalive_timeout=limits.idle_timeout_s + 4 * SWEEP_S,
    )
    await runner.setup()
    server = runner.server
    if server is None:  # pragma: no cover - set by setup()
        raise RuntimeError("the web runner has no server")
    listening = Listener(gate, gate.protocols(server), throttle)
    await listening.start(limits.host, limits.port)
    quiet = QuietLoopErrors(throttle, listening.sockets, gate.owns)
    quiet.install()
    records = QuietRecords(throttle)
    aiohttp_server = logging.getLogger("aiohttp.server")
    aiohttp_server.addFilter(records)
    metrics = GateMetrics(gate.counts)
    registry = display.registry
    if registry is not None:
        registry.register(metrics)
    sweeping = asyncio.create_task(gate.sweep())
    if started is not None:
        started.set()
    try:
        await asyncio.Event().wait()
    finally:
        sweeping.cancel()
        listening.close()
        with contextlib.suppress(Exception):
            await runner.cleanup()
        gate.close_all()
        if registry is not None:
            registry.unregister(metrics)
        aiohttp_server.removeFilter(records)
        quiet.remove()
        throttle.flush(everything=True)
