"""The wide-area link's parts of the service, as ``[wide_area]`` says (docs/wide-area.md).

* At **central**, the MQTT source answers the linked properties: the driver context gets a
  :class:`~controller.runtime.site_links.JournalSiteLinks` over the journal's state and the
  controller key (``sites``).
* At a **property**, an uplink to central's brokers (the one driver whose spec has an uplink,
  :func:`controller.plugins.uplink_driver`: the controller imports no driver and names none)
  reads the journal's outbox through a :class:`~controller.runtime.site_chain.JournalSiteChain`,
  woken by the sequencer's commits, and is supervised as a source; its parts' metric families
  (``jackpotd_wide_area_*``) are registered with the metrics as any driver's.

Both sign with the controller key the checkpoints are signed with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from controller import plugins
from controller.config.wide_area_settings import WideAreaCentral
from controller.errors import ConfigurationError
from controller.journal.high_water import site_heads_path
from controller.plugins import DriverParts
from controller.runtime.site_chain import JournalSiteChain
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from controller.config.load import Config
    from controller.ports import SiteLinks
    from controller.runtime.view import Runtime


@dataclass(slots=True)
class WideAreaParts:
    """What the service adds for the link: central's view for its source, or the uplink."""

    sites: SiteLinks | None = None
    parts: DriverParts = field(default_factory=DriverParts)
    """The uplink's parts (its source, its metric families); none at central."""


def wide_area_parts(config: Config, runtime: Runtime) -> WideAreaParts:
    """The link's parts for this controller's role; nothing without ``[wide_area]``."""
    wide = config.wide_area
    schedule = runtime.sequencer.checkpoints
    if wide is None:
        return WideAreaParts()
    if schedule is None:  # pragma: no cover - build_runtime always sets it
        raise ConfigurationError("the wide-area link signs with the controller key: none")
    key = schedule.key
    if not isinstance(key, ControllerKey):  # the signer process signs heads and checkpoints only
        raise ConfigurationError(
            f"{config.source}: controller.signer_socket: the wide-area link signs its messages "
            "with the controller key itself: set key_file"
        )
    heads = runtime.sequencer.heads
    if isinstance(wide, WideAreaCentral):
        # The properties' signed heads are kept beside central's own (docs/security.md).
        marks = None if heads is None else site_heads_path(heads.path)
        links = JournalSiteLinks(runtime.journal, key, wide.heartbeat_s, marks)
        return WideAreaParts(sites=links)
    chain = JournalSiteChain(
        runtime.journal, key, wide.central_key, wide.grace_s, runtime.broadcast
    )
    runtime.sequencer.on_commit.append(chain.committed)
    if heads is not None:  # each signed head goes to central too, which keeps the highest
        chain.head = heads.last
        heads.on_signed.append(chain.head_signed)
    spec = plugins.uplink_driver()
    if spec.uplink is None:  # pragma: no cover - uplink_driver returns one that has
        raise ConfigurationError(f"driver {spec.name!r} cannot link to central")
    return WideAreaParts(parts=spec.uplink(wide.central, wide.central_site, chain))
