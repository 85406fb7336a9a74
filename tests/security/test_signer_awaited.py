"""The daemon's signatures through the signer process are awaited: a stopped signer blocks nothing.

A real ``jackpotd signer`` stopped with SIGSTOP (its socket accepts, nobody answers):
``RemoteSigner.sign_async`` gives up at its timeout with a clear error while the event loop
goes on running, and signs again once the signer is continued (controller/runtime/
remote_signer.py, "Off the event loop"). What the meters sink publishes while the signer is stopped:
tests/drivers/mqtt/test_mqtt_sink_signer_stopped.py.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import TYPE_CHECKING

import pytest
from support.drivers.sign_station import (
    POOL,
)
from support.runtime.controller_keys import write_controller_key
from support.runtime.signer_process import stoppable

from controller.meter_signature import METER_DOMAIN, MeterKeys, signed_bytes
from controller.runtime.remote_signer import RemoteSigner
from controller.security.signer import SignerUnavailableError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.runtime.signer_process import SignerProcess


TIMEOUT_S = 0.5


@pytest.fixture
def awaited_signer(tmp_path: Path) -> Iterator[SignerProcess]:
    write_controller_key(tmp_path)
    yield from stoppable(tmp_path / "controller.key", tmp_path, "node-1")


def test_a_stopped_signer_is_unavailable_at_its_timeout_and_the_loop_runs_meanwhile(
    awaited_signer: SignerProcess,
) -> None:
    client = RemoteSigner(awaited_signer.socket, timeout_s=TIMEOUT_S)
    fields = {"v": 2, "pool": POOL, "meter_cents": 1, "key_id": client.key_id}
    data = signed_bytes(METER_DOMAIN, fields)

    async def scenario() -> tuple[int, float]:
        assert client.sign(data) == await client.sign_async(data)  # both ways, one signature
        os.kill(awaited_signer.process.pid, signal.SIGSTOP)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        started = time.monotonic()
        with pytest.raises(SignerUnavailableError, match=f"did not answer within {TIMEOUT_S:g} s"):
            await client.sign_async(data)
        waited = time.monotonic() - started
        ticker.cancel()
        os.kill(awaited_signer.process.pid, signal.SIGCONT)
        signature = await client.sign_async(data)  # a fresh connection: the late answer unread
        assert (
            MeterKeys([client.public_key]).refusal(METER_DOMAIN, {**fields, "sig": signature})
            is None
        )
        await client.aclose()
        return ticks, waited

    ticks, waited = asyncio.run(scenario())
    assert TIMEOUT_S <= waited < TIMEOUT_S * 4, waited
    assert ticks >= 5, f"the loop ran {ticks} times in {waited:.2f} s: it was blocked"
