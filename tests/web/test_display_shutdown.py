"""Stopping the daemon while displays are open.

A pit keeps its display pages open all day, so each holds an ``/events`` stream that never
ends by itself. systemd gives the unit ``TimeoutStopSec=30`` before it sends SIGKILL: the
display must end its streams when the service stops, not wait for the pages to go away
(aiohttp's graceful shutdown waits up to a minute per phase for handlers that never return).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

import aiohttp
import msgspec
from support.runtime.daemon import daemon
from support.runtime.floor import free_port, within

from controller.service.demo import demo_config

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.load import Config

DISPLAYS = 100
STOP_S = 5.0
"""How long a stop may take with the displays open; systemd allows 30 s before SIGKILL."""


def with_room_for(config: Config, streams: int) -> Config:
    """The configuration with ``[web] max_streams`` raised to ``streams``."""
    web = msgspec.structs.replace(config.web, max_streams=streams)
    return dataclasses.replace(config, web=web)


async def test_stopping_with_100_displays_open_ends_their_streams_and_returns_within_5_s(
    tmp_path: Path,
) -> None:
    playing = demo_config(tables=2, journal=tmp_path / "demo.db", port=free_port(), interval_s=0.05)
    config = with_room_for(playing, DISPLAYS)
    connector = aiohttp.TCPConnector(limit=0)  # one connection per display
    async with daemon(config) as running, aiohttp.ClientSession(connector=connector) as pages:
        opening = asyncio.gather(*(pages.get(running.url + "events") for _ in range(DISPLAYS)))
        streams = await within(opening, "100 streams to open")
        assert [stream.status for stream in streams] == [200] * DISPLAYS
        metrics = running.runtime.metrics
        assert metrics is not None
        assert metrics.streams.open == DISPLAYS

        running.stop_event.set()
        async with asyncio.timeout(STOP_S):
            await running.task
        # Every display's stream was ended by the daemon, not cut by the test.
        for stream in streams:
            async with asyncio.timeout(STOP_S):
                await stream.content.read()
            assert stream.content.at_eof()
        assert metrics.streams.open == 0
