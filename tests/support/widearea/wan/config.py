"""The lab's configuration files: central's and each property's ``jackpotd.toml``.

docs/wide-area.md, "Configuration". Central (site ``hub``) owns the wide-area pool ``mega``
(progressive-1) and links the two properties; its ``house`` table carries the pool's paytable
and stays closed (no device ever speaks for it). Each property plays ``mega`` on its first
tables and a local pool on its last one (local play must go on through a cut), all over MQTT
on its own broker, and reaches central's broker over TLS through its WAN proxy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from support.runtime.controller_keys import KEY_LINE

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

HOST: Final = "127.0.0.1"
CENTRAL_SITE: Final = "hub"
SITES: Final = ("atlantic", "boardwalk")
POOL: Final = "mega"
"""Central's wide-area pool."""
LOCAL_POOL: Final = "local"
"""Each property's own pool, played by its last table."""
PAYTABLE: Final = "progressive-1"
TABLE_HEARTBEAT_TIMEOUT_S: Final = 5.0


def wide_tables(site: str, count: int) -> list[str]:
    """A property's tables on central's pool: ``a1``, ``a2``... for ``atlantic``."""
    return [f"{site[0]}{n}" for n in range(1, count + 1)]


def local_table(site: str, count: int) -> str:
    """A property's table on its local pool, after its wide-area ones."""
    return f"{site[0]}{count + 1}"


@dataclass(frozen=True)
class TlsFiles:
    """What a property presents to central's broker, and the CA it checks central by."""

    ca: Path
    cert: Path
    key: Path


def _controller(site: str, folder: Path) -> str:
    return (
        f'[controller]\nsite = "{site}"\nid = "{site}-1"\njournal = "{folder / "journal.db"}"\n'
        f"heartbeat_timeout_s = {TABLE_HEARTBEAT_TIMEOUT_S}\n{KEY_LINE}\n"
    )


def _broker(port: int) -> str:
    return (
        f'[broker]\nhost = "{HOST}"\nport = {port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 1.0\n\n"
    )


def _table(table_id: str, pool: str) -> str:
    return (
        f'[[tables]]\nid = "{table_id}"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
        f'progressive = "{PAYTABLE}"\npool = "{pool}"\n\n'
    )


@dataclass(frozen=True)
class PropertyFile:
    """One property's ``jackpotd.toml`` as the lab writes it."""

    site: str
    tables: int
    """Its tables on central's pool (one more plays its local pool)."""
    broker_port: int
    """Its own mosquitto, for its tables."""
    wan_port: int
    """Its WAN proxy's port, in front of central's TLS listener."""
    central_key: str
    tls: TlsFiles
    grace_s: float
    web_port: int

    def text(self, folder: Path) -> str:
        """The file's text; the journal and the controller key in ``folder``."""
        text = _controller(self.site, folder) + _broker(self.broker_port)
        text += f'[[pools]]\nid = "{LOCAL_POOL}"\npaytable = "{PAYTABLE}"\n\n'
        text += "".join(_table(table, POOL) for table in wide_tables(self.site, self.tables))
        text += _table(local_table(self.site, self.tables), LOCAL_POOL)
        text += (
            f'[wide_area]\nrole = "property"\nsite = "{self.site}"\n'
            f'central_site = "{CENTRAL_SITE}"\ncentral_key = "{self.central_key}"\n'
            f'pools = ["{POOL}"]\ngrace_s = {self.grace_s}\n\n'
            f'[wide_area.central]\nhost = "{HOST}"\nport = {self.wan_port}\nkeepalive_s = 5\n'
            "backoff_initial_s = 0.1\nbackoff_cap_s = 1.0\n\n"
            f'[wide_area.central.tls]\nca_file = "{self.tls.ca}"\n'
            f'cert_file = "{self.tls.cert}"\nkey_file = "{self.tls.key}"\n\n'
        )
        return text + f'[web]\nhost = "{HOST}"\nport = {self.web_port}\n'


@dataclass(frozen=True)
class CentralFile:
    """Central's ``jackpotd.toml``."""

    broker_port: int
    """Central's mosquitto, its plain listener (central's own connections)."""
    site_keys: dict[str, str]
    """Each linked property's controller public key."""
    heartbeat_s: float
    web_port: int

    def text(self, folder: Path) -> str:
        """The file's text; the journal and the controller key in ``folder``."""
        text = _controller(CENTRAL_SITE, folder) + _broker(self.broker_port)
        text += f'[[pools]]\nid = "{POOL}"\npaytable = "{PAYTABLE}"\n\n'
        text += (
            f'[[tables]]\nid = "house"\ntransport = "mqtt"\nprogressive = "{PAYTABLE}"\n'
            f'pool = "{POOL}"\n\n'
        )
        text += f'[wide_area]\nrole = "central"\nheartbeat_s = {self.heartbeat_s}\n\n'
        for site, key in sorted(self.site_keys.items()):
            text += (
                f'[[wide_area.sites]]\nid = "{site}"\npublic_key = "{key}"\npools = ["{POOL}"]\n\n'
            )
        return text + f'[web]\nhost = "{HOST}"\nport = {self.web_port}\n'


def write(folder: Path, text: str) -> Path:
    """``folder/jackpotd.toml``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jackpotd.toml"
    path.write_text(text, encoding="utf-8")
    return path


def central_broker_conf(
    directory: Path, plain_port: int, tls_port: int, server: Sequence[Path], user: str
) -> str:
    """Central's mosquitto: a plain listener for central itself, TLS for the properties.

    The TLS listener requires client certificates, as deploy/mosquitto ships its listener.
    """
    ca, cert, key = server
    return (
        "per_listener_settings false\nallow_anonymous true\nset_tcp_nodelay true\n"
        f"persistence true\npersistence_location {directory}/\npersistence_file mosquitto.db\n"
        "max_queued_messages 100000\nlog_dest stderr\nlog_type error\nlog_type warning\n"
        "log_type notice\nlog_type information\nconnection_messages true\n"
        f"user {user}\n"
        f"listener {plain_port} {HOST}\n"
        f"listener {tls_port} {HOST}\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\n"
        "tls_version tlsv1.2\nrequire_certificate true\nuse_identity_as_username false\n"
    )
