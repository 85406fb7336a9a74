"""Running a connection's concurrent loops together, for the drivers.

A connection usually has two loops (one reads, one writes or watches); when either ends or
fails the connection is over and the other must stop too.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Coroutine


async def until_first_ends(*coroutines: Coroutine[Any, Any, None]) -> None:
    """Run the coroutines together until one ends; cancel the others; raise what it raised.

    Not a TaskGroup: in Python 3.11 a task group whose child fails while the parent waits in
    its exit leaves the parent's cancellation count raised for good (fixed in 3.12), which
    would make :func:`drivers.mqtt.connection.raise_if_cancelled` see a cancellation that never
    was on the next connection.
    """
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
    for task in done:
        task.result()
