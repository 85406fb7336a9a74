"""What a warm standby serves on the display's port while another node sequences (docs/ha.md).

A standby (controller/service/standby.py) has no sequencer and no meters of its own to show,
but it is up, and says so where the leader's page would:

| Path | What it answers |
|------|-----------------|
| ``/leader`` | 503: this node stands by; the node holding the sequencer, its epoch, why |
| ``/healthz`` | 503, with the same reason (a standby does not hear the floor) |
| ``/metrics`` | ``jackpotd_standby`` 1, the holder's epoch, the row followed to |

HAProxy's ``GET /leader`` check therefore finds exactly one node to send agents, signs and
displays to, and an operator (or Prometheus) sees a standby as up rather than as a service
restarting. When the node takes over, this page stops and the display starts on the same port.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from controller.runtime.role_metrics import sequencer_role

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

NO_STORE: Final = {"Cache-Control": "no-store"}


@dataclass(slots=True)
class Standing:
    """What a standby knows of itself and of the node it waits for."""

    node: str
    controller: str
    reason: str = "opening the journal"
    holder: str = ""
    epoch: int = 0
    """The fence's epoch as last read: the holder's."""
    seq: int = 0
    """The last journal row this standby has followed."""


class StandbyMetrics:
    """A standby's metrics (controller/runtime/role_metrics.py), in a registry of its own."""

    def __init__(self, standing: Standing) -> None:
        self.standing = standing
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(self)

    def collect(self) -> Iterator[Metric]:
        """Standing by: the holder's epoch, and the row followed to."""
        standing = self.standing
        yield from sequencer_role(standby=True, epoch=standing.epoch, head=standing.seq)


class StandbyPage:
    """The endpoints of a standby (see the module docstring)."""

    def __init__(self, standing: Standing) -> None:
        self.standing = standing
        self.metrics = StandbyMetrics(standing)

    @property
    def registry(self) -> CollectorRegistry:
        """Where the web port's own metrics join the standby's."""
        return self.metrics.registry

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application()
        app.add_routes(
            [
                web.get("/leader", self.leader),
                web.get("/healthz", self.health),
                web.get("/metrics", self.prometheus),
            ]
        )
        return app

    def _body(self) -> dict[str, object]:
        standing = self.standing
        return {
            "node": standing.node,
            "controller": standing.controller,
            "standby": True,
            "holder": standing.holder,
            "epoch": standing.epoch,
            "seq": standing.seq,
            "reason": standing.reason,
        }

    async def leader(self, _: web.Request) -> web.Response:
        """503: a standby never sequences."""
        return web.json_response(self._body(), status=503, headers=NO_STORE)

    async def health(self, _: web.Request) -> web.Response:
        """503 and why: a standby does not hear the floor."""
        body = {"ok": False, "reason": f"standby: {self.standing.reason}", "sources": {}}
        return web.json_response(body, status=503, headers=NO_STORE)

    async def prometheus(self, request: web.Request) -> web.Response:
        """The standby's metrics in Prometheus's text format."""
        encode, content_type = choose_encoder(request.headers.get("Accept", ""))
        return web.Response(
            body=encode(self.metrics.registry), headers={"Content-Type": content_type}
        )
