"""The ``[broker]`` section: the MQTT driver's settings, and the checks it makes on them.

msgspec Structs that refuse unknown keys; the configuration loader hands the section to
:class:`BrokerSettings` through the driver's spec (drivers/mqtt/spec.py), then to
:func:`check_broker` (docs/mqtt.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.plugins import SettingsChecks


class TlsSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """TLS for the broker connection: the CA to trust, and a client certificate if required."""

    ca_file: str
    cert_file: str | None = None
    key_file: str | None = None
    insecure_skip_hostname_check: bool = False


class BrokerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The MQTT broker the controller uses (docs/mqtt.md)."""

    host: str = "127.0.0.1"
    port: int = 1883
    hosts: list[str] = []
    """Brokers to try in turn, ``host`` or ``host:port`` each (``port`` when none is given);
    when set, ``host`` is not used. A follower (an MQTT sign or display, a table agent) moves
    to the next one when its broker fails (docs/ha.md, "Brokers and followers"); one HAProxy
    address that routes to the leader's broker does the same in one entry. The controller's
    own connections use the first: a node publishes to its own broker."""
    client_id: str = "jackpotd"
    username: str | None = None
    password_file: str | None = None
    """A file holding the password (never the password itself in the configuration)."""
    out_username: str | None = None
    """The user of the second connection (meters, hits and commands out, ``<client_id>-out``);
    None: ``username``. A broker that names each session after its user
    (``use_username_as_clientid``, as deploy/mosquitto ships it) needs a user per connection."""
    out_password_file: str | None = None
    """The file holding ``out_username``'s password."""
    tls: TlsSettings | None = None
    keepalive_s: int = 15
    site: str = "casino"
    """The topic prefix is ``<site>/jackpot/v1/``."""
    controller_id: str = ""
    """The controller's status topic is ``controller/<controller_id>/status`` (default: the
    client id). The configuration loader sets it from ``[controller] id``."""
    backoff_initial_s: float = 0.1
    backoff_cap_s: float = 10.0

    def addresses(self) -> list[tuple[str, int]]:
        """The brokers to connect to, in the order they are tried: ``hosts``, else ``host``."""
        if not self.hosts:
            return [(self.host, self.port)]
        return [broker_address(entry, self.port) for entry in self.hosts]

    def at(self, address: tuple[str, int]) -> BrokerSettings:
        """These settings for one broker of :meth:`addresses`."""
        host, port = address
        return msgspec.structs.replace(self, host=host, port=port, hosts=[])

    def outbound(self) -> BrokerSettings:
        """The settings of the second connection: logged in as ``out_username``, if set."""
        if self.out_username is None:
            return self
        return msgspec.structs.replace(
            self, username=self.out_username, password_file=self.out_password_file
        )


def broker_address(entry: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6 address]:port`` as a host and a port; ValueError if not."""
    text = entry.strip()
    if text.startswith("["):  # an IPv6 address, its port after the bracket
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r}: write [address]:port")
        number = rest[1:]
    elif text.count(":") == 1:
        host, _, number = text.partition(":")
    else:  # a name, an IPv4 address, or an IPv6 address without a port
        host, number = text, ""
    if number and not number.isdigit():
        raise ValueError(f"{entry!r}: the port must be a number")
    port = int(number) if number else default_port
    if not host or not 0 < port < 65536:
        raise ValueError(f"{entry!r}: write host or host:port, the port 1 to 65535")
    return host, port


def check_broker(
    raw: BrokerSettings, checks: SettingsChecks, key: str, written: Mapping[str, Any]
) -> BrokerSettings:
    """Check ``[broker]``; the topic prefix and ids come from ``[controller]``, paths resolved."""
    if "site" in written:
        raise checks.fail(f"{key}.site", "the topic prefix is set once, as controller.site")
    if "controller_id" in written:
        raise checks.fail(
            f"{key}.controller_id", "the controller's id is set once, as controller.id"
        )
    if not raw.host.strip():
        raise checks.fail(f"{key}.host", "a host name or address is required")
    checks.port(f"{key}.port", raw.port)
    for index, entry in enumerate(raw.hosts):
        try:
            broker_address(entry, raw.port)
        except ValueError as error:
            raise checks.fail(f"{key}.hosts[{index}]", str(error)) from None
    if "hosts" in written and "host" in written:
        raise checks.fail(f"{key}.hosts", f"give {key}.host or {key}.hosts, not both")
    checks.positive(f"{key}.keepalive_s", raw.keepalive_s)
    checks.positive(f"{key}.backoff_initial_s", raw.backoff_initial_s)
    if raw.backoff_cap_s < raw.backoff_initial_s:
        raise checks.fail(f"{key}.backoff_cap_s", f"is below {key}.backoff_initial_s")
    if raw.password_file is not None and raw.username is None:
        raise checks.fail(f"{key}.password_file", f"a password needs {key}.username")
    password = checks.existing_file(f"{key}.password_file", raw.password_file, secret=True)
    tls = raw.tls
    if tls is not None:
        if (tls.cert_file is None) != (tls.key_file is None):
            raise checks.fail(f"{key}.tls", "cert_file and key_file go together")
        tls = msgspec.structs.replace(
            tls,
            ca_file=checks.existing_file(f"{key}.tls.ca_file", tls.ca_file),
            cert_file=checks.existing_file(f"{key}.tls.cert_file", tls.cert_file),
            key_file=checks.existing_file(f"{key}.tls.key_file", tls.key_file, secret=True),
        )
    client_id = raw.client_id if "client_id" in written else f"jackpotd-{checks.controller_id}"
    return msgspec.structs.replace(
        raw,
        site=checks.site,
        controller_id=checks.controller_id,
        client_id=client_id,
        password_file=password,
        out_password_file=_out_login(raw, checks, key),
        tls=tls,
    )


def _out_login(raw: BrokerSettings, checks: SettingsChecks, key: str) -> str | None:
    """Check the second connection's user; its password file, resolved."""
    if raw.out_password_file is not None and raw.out_username is None:
        raise checks.fail(f"{key}.out_password_file", f"a password needs {key}.out_username")
    if raw.out_username is not None:
        if raw.username is None:
            raise checks.fail(f"{key}.out_username", f"needs {key}.username as well")
        if raw.out_username == raw.username:
            # Under use_username_as_clientid the two would take each other's session.
            raise checks.fail(
                f"{key}.out_username", f"is {key}.username: each connection needs its own user"
            )
    return checks.existing_file(f"{key}.out_password_file", raw.out_password_file, secret=True)
