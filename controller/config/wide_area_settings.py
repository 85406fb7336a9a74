"""What ``[wide_area]`` configures, once read: this controller as a property, or as central.

The section's reading and its checks are :mod:`controller.config.wide_area`; these are the
settings it gives, kept apart so that the schema (:mod:`controller.config.schema`) names them
without importing the reader, which reads the schema's pools and tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping


class Role(StrEnum):
    """Which side of a wide-area link this controller is (docs/wide-area.md, "Roles")."""

    PROPERTY = "property"
    CENTRAL = "central"


@dataclass(frozen=True, slots=True)
class WideAreaProperty:
    """``[wide_area]`` of a property: who it is to central, whom it trusts, what it plays."""

    site: str
    """Its id at central (central's ``[[wide_area.sites]]`` id for it)."""
    central_key: str
    """Central's controller public key (base64): its acknowledgements and awards carry it."""
    pools: Mapping[str, str]
    """Each wide-area pool its tables play, and the progressive paytable they play it with."""
    grace_s: float
    """Wide-area wagers close this long after central was last heard."""
    central: object
    """Central's brokers: the MQTT driver's settings (its ``BrokerSettings``), TLS always set."""
    central_site: str = ""
    """Central's ``[controller] site``: its topics are under ``<central_site>/jackpot/v1/``."""

    @property
    def role(self) -> Role:
        """:attr:`Role.PROPERTY`."""
        return Role.PROPERTY


@dataclass(frozen=True, slots=True)
class PropertySite:
    """A property central links: one ``[[wide_area.sites]]`` entry."""

    site: str
    public_key: str
    """The property's controller public key (base64): its messages must carry its signature."""
    pools: tuple[str, ...]
    """The local pools (``[[pools]]`` ids) its tables feed."""
    key: str
    """Where it stands in the file (``wide_area.sites[0]``)."""


@dataclass(frozen=True, slots=True)
class WideAreaCentral:
    """``[wide_area]`` of central: the properties it links, how often it acknowledges them."""

    sites: tuple[PropertySite, ...]
    heartbeat_s: float

    @property
    def role(self) -> Role:
        """:attr:`Role.CENTRAL`."""
        return Role.CENTRAL


WideAreaSettings: TypeAlias = WideAreaProperty | WideAreaCentral
