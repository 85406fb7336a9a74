"""Typed settings of the transports, shared by the configuration loader and the drivers.

They are msgspec Structs so that :mod:`controller.config.load` can decode them straight out of the
TOML file (unknown keys refused) and the drivers can take them as they are.
"""

from __future__ import annotations

import msgspec


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

    def outbound(self) -> BrokerSettings:
        """The settings of the second connection: logged in as ``out_username``, if set."""
        if self.out_username is None:
            return self
        return msgspec.structs.replace(
            self, username=self.out_username, password_file=self.out_password_file
        )


class SerialPortSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One serial line to a table's devices (reference protocol "table peripheral serial v1")."""

    name: str
    url: str
    """A device path (``/dev/ttyUSB0``) or any pyserial URL (``socket://...``, ``rfc2217://``)."""
    table_id: str
    baudrate: int = 115_200
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    backoff_initial_s: float = 0.1
    backoff_cap_s: float = 5.0
