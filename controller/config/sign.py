"""A sign station's configuration (``jackpotd sign --config sign.toml``): TOML, checked, typed.

A sign station is the small computer behind one or more LED meter signs on the floor, away
from the controller: it follows the meters over MQTT (docs/ha.md, "Brokers and followers")
and drives its signs on their serial lines. The file has three parts (deploy/sign.toml
documents every key)::

    [sign]           name, site, pools, controller_keys, hits_seen
    [broker]         the MQTT driver's section, as in the controller's file (docs/mqtt.md)
    [[alpha_sign]]   the Alpha sign driver's entries, as in the controller's file (docs/signs.md)

The driver sections are read by the drivers' specs (:mod:`controller.plugins`), as in the
controller's file and the agent's, so the same keys mean the same things. Every error is one
line, ``file: key: reason``; relative paths are relative to the file's folder.

``[sign] controller_keys`` is required: the public key of each controller node (what
``jackpotd key generate`` printed, base64 of the raw Ed25519 key), the keys the meters must be
signed with (controller/meter_signature.py). A station without one would believe any meter
anyone published on the broker, so it is refused rather than run so.

``[sign] hits_seen`` names the file (in the unit's state folder) where the station keeps the
payouts of the hits it showed within the age a hit is believed, so that a genuine hit captured
and replayed after the station restarted is not celebrated twice (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from controller.config.driver_sections import read_driver
from controller.config.load import read_config_file, toml_document
from controller.config.schema import ConfigError
from controller.config.values import Checker, key_of
from controller.plugins import by_section, link_of
from controller.security.controller_key import ControllerKeyError, public_key

if TYPE_CHECKING:
    from pathlib import Path

SIGNS: Final = "alpha_sign"


class SignSection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[sign]`` as written."""

    name: str
    site: str = "casino"
    pools: list[str] = []
    """The pools followed; none: the pools of the signs below."""
    controller_keys: list[str] = []
    """The controller public keys (one per node) the meters must be signed with: required."""
    hits_seen: str | None = None
    """The file the station keeps the hits it showed in (docs/signs.md, "Sign stations")."""


class _SignFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sign: SignSection


@dataclass(frozen=True, slots=True)
class SignStationConfig:
    """Everything ``jackpotd sign`` runs on.

    The driver sections are held without their types, as the agent's are (the core imports
    no driver): the MQTT driver's settings and the Alpha sign driver's, checked by their specs.
    """

    source: str
    """The file it was read from."""
    name: str
    """The station's name: its MQTT client id is ``sign-<name>``."""
    pools: tuple[str, ...]
    broker: object
    signs: tuple[object, ...]
    controller_keys: tuple[str, ...] = ()
    """The controller public keys (base64) the meters must be signed with."""
    hits_seen: Path | None = None
    """Where the payouts of the hits shown within their age are kept across restarts; None:
    in memory only, so a genuine hit replayed soon after a restart would be shown again."""


def load_sign_config(path: Path) -> SignStationConfig:
    """Read and check a sign station's configuration file."""
    return parse_sign_config(read_config_file(path), str(path), path.absolute().parent)


def parse_sign_config(data: bytes, source: str, base_dir: Path) -> SignStationConfig:
    """Check one sign station's configuration document; ``source`` names it in errors."""
    document = toml_document(data, source)
    link = link_of("sign")  # the driver the file reaches the controller by
    broker, signs = document.pop(link.section, None), document.pop(SIGNS, None)
    try:
        section = msgspec.convert(document, _SignFile).sign
    except msgspec.ValidationError as error:
        raise ConfigError(source, *key_of(error)) from error
    checks = Checker(source, base_dir)
    name = checks.identifier("sign.name", section.name)
    checks = checks.naming(checks.identifier("sign.site", section.site), f"sign-{name}")
    seen: dict[str, str] = {}
    pools = tuple(
        checks.identifier(f"sign.pools[{index}]", pool, seen)
        for index, pool in enumerate(section.pools)
    )
    keys = _controller_keys(checks, section.controller_keys)
    if not isinstance(broker, dict):
        raise checks.fail(
            link.section, f"write a [{link.section}] table: the signs follow the meters by it"
        )
    (entry,) = read_driver(checks, link, broker)
    settings = entry.settings
    if "client_id" not in broker:
        settings = msgspec.structs.replace(settings, client_id=f"sign-{name}")
    if not isinstance(signs, list) or not signs:
        raise checks.fail(SIGNS, "write one [[alpha_sign]] table for each sign of the station")
    entries = read_driver(checks, by_section()[SIGNS], signs)
    for entry in entries:
        pool = str(entry.settings.pool_id)
        if pools and pool not in pools:
            reason = f"is {pool!r}, not one of sign.pools ({', '.join(pools)}): it would stay blank"
            raise checks.fail(f"{entry.key}.pool_id", reason)
    return SignStationConfig(
        source=source,
        name=name,
        pools=pools or tuple(sorted({str(entry.settings.pool_id) for entry in entries})),
        broker=settings,
        signs=tuple(entry.settings for entry in entries),
        controller_keys=keys,
        hits_seen=None if section.hits_seen is None else checks.path(section.hits_seen),
    )


def _controller_keys(checks: Checker, written: list[str]) -> tuple[str, ...]:
    """``[sign] controller_keys``, each an Ed25519 public key; at least one."""
    if not written:
        reason = (
            "write the public key of each controller node (jackpotd key generate printed it): "
            "without one the signs would show any meter anyone publishes"
        )
        raise checks.fail("sign.controller_keys", reason)
    keys: list[str] = []
    for index, text in enumerate(written):
        try:
            key = public_key(text)
        except ControllerKeyError as error:
            raise checks.fail(f"sign.controller_keys[{index}]", str(error)) from error
        if key in keys:
            raise checks.fail(f"sign.controller_keys[{index}]", "is written twice")
        keys.append(key)
    return tuple(keys)
