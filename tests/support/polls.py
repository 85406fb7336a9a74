"""A bounded wait on a counter or field that tells nobody when it moves.

For the wide-area link's tests (tests/drivers/mqtt/test_mqtt_site_*.py): an uplink's refusal
counts, its connection's nonce, awards heard again. The caller bounds it (``within``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

POLL_S = 0.02


async def until(reached: Callable[[], bool]) -> None:
    """Until ``reached()``, read every ``POLL_S`` (the caller bounds the wait)."""
    while not reached():
        await asyncio.sleep(POLL_S)
