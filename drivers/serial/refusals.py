"""Every reason a serial line refuses a frame with (drivers/serial/protocol.py, framing.py).

The metrics show each of them at 0 from the start, per port and in the controller's count of
refused input (docs/metrics.md), so that a reason's first occurrence is an increase, not a new
series.
"""

from __future__ import annotations

from typing import Final

from drivers.poison import DEAD_LETTER
from drivers.serial.framing import BAD_CRC, GARBAGE, OVERSIZE

REFUSALS: Final[tuple[str, ...]] = tuple(
    sorted(
        {
            # Framing: the bytes on the line.
            BAD_CRC,
            GARBAGE,
            OVERSIZE,
            # The payload of a frame whose checksum was good (drivers/serial/protocol.py).
            "field-count",
            "unknown-type",
            "undecodable",
            "bad-device",
            "bad-seq",
            "bad-round",
            "bad-seat",
            "bad-spot",
            "bad-present",
            "bad-amount",
            "bad-position",
            "bad-card",
            "bad-last",
            DEAD_LETTER,
        }
    )
)
"""The reason tokens, sorted."""
