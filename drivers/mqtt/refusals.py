"""Every reason the MQTT source refuses input with (docs/mqtt.md, "Rejected input").

The metrics show each of them at 0 from the start (docs/metrics.md), so that a dashboard and
an alert see a reason's first occurrence as an increase, not as a new series. A field that
fails validation is ``bad-<field>``: one token for each field of each payload type.
"""

from __future__ import annotations

from typing import Final

import msgspec

from drivers.mqtt.payloads import (
    BetPayload,
    CardPayload,
    DonePayload,
    HeartbeatPayload,
    LockPayload,
    VoidPayload,
)
from drivers.mqtt.site_answers import REFUSALS as SITE_REFUSALS
from drivers.poison import DEAD_LETTER

_FIXED: Final = (
    "bad-json",
    "bad-payload",
    "too-large",
    "bad-version",
    "missing-field",
    "unknown-field",
    "bad-card",
    "unknown-type",
    "bad-table",
    "unknown-table",
    "unknown-topic",
    "bad-status",
    "duplicate-key",
    "undecodable",
    DEAD_LETTER,
)
_PAYLOADS: Final = (
    BetPayload,
    LockPayload,
    CardPayload,
    DonePayload,
    VoidPayload,
    HeartbeatPayload,
)

REFUSALS: Final[tuple[str, ...]] = tuple(
    sorted(
        {
            *_FIXED,
            *SITE_REFUSALS,
            *(
                "bad-" + field.name.replace("_", "-")
                for payload in _PAYLOADS
                for field in msgspec.structs.fields(payload)
            ),
        }
    )
)
"""The reason tokens, sorted."""
