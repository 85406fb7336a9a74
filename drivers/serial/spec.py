"""The serial driver's spec: each ``[[serial]]`` entry is one line to one table's devices.

A table names its line as ``transport = "serial:<name>"`` and the line names its table back
(``table_id``); the loader checks both ends (docs/architecture.md, "The reference serial
protocol"). pyserial is imported only when a line is configured. The line's metric families
(``jackpotd_serial_*``) are the driver's own (:mod:`drivers.serial.metrics`).
"""

from __future__ import annotations

from controller.plugins import DriverContext, DriverParts, DriverSpec, LinkView
from drivers.serial.metrics import SerialFamilies
from drivers.serial.refusals import REFUSALS
from drivers.serial.settings import SerialPortSettings, check_port


def build(settings: SerialPortSettings, _context: DriverContext) -> DriverParts:
    """The line's source."""
    from drivers.serial.link import SerialSource  # noqa: PLC0415 - pyserial only with a line

    source = SerialSource(settings)
    return DriverParts(
        sources=[source],
        links=[LinkView(source, "serial line", up="open")],
        health=[source],
        collectors=[SerialFamilies(source)],
    )


SPEC = DriverSpec(
    refusals=REFUSALS,
    name="serial",
    section="serial",
    settings=SerialPortSettings,
    build=build,
    many=True,
    check=check_port,
    transport="serial",
    instance=lambda port: port.name,
    bound_table=lambda port: port.table_id,
    devices=lambda port: (port.url,),
    describe=lambda port: f"{port.url} at {port.baudrate} baud -> table {port.table_id}",
)
