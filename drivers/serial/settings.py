"""The ``[[serial]]`` sections: one serial line to a table's devices, and its checks.

The configuration loader hands each entry to :class:`SerialPortSettings` through the driver's
spec (drivers/serial/spec.py), then to :func:`check_port`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.plugins import SettingsChecks


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


def check_port(
    port: SerialPortSettings, checks: SettingsChecks, key: str, _written: Mapping[str, Any]
) -> SerialPortSettings:
    """Check one ``[[serial]]`` entry's line settings.

    Its name and its table are checked by the loader, through the spec's ``instance`` and
    ``bound_table``.
    """
    valid = (
        ("url", bool(port.url.strip()), "a device path or pyserial URL"),
        ("baudrate", port.baudrate > 0, "above 0"),
        ("bytesize", port.bytesize in (5, 6, 7, 8), "5, 6, 7 or 8"),
        ("parity", port.parity in ("N", "E", "O", "M", "S"), "N, E, O, M or S"),
        ("stopbits", port.stopbits in (1, 1.5, 2), "1, 1.5 or 2"),
        ("backoff_initial_s", port.backoff_initial_s > 0, "above 0"),
        (
            "backoff_cap_s",
            port.backoff_cap_s >= port.backoff_initial_s,
            "at least backoff_initial_s",
        ),
    )
    for name, ok, wanted in valid:
        if not ok:
            raise checks.fail(f"{key}.{name}", f"must be {wanted}, not {getattr(port, name)!r}")
    return port
