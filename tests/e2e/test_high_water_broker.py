"""The broker keeps the controller's high-water mark where a shell as the service user cannot.

docs/security.md, "History never goes back". The daemon (the real service, in this event loop)
retains each signed head on ``controller/<id>/head`` on a real mosquitto. A shell as the service
user can roll back the journal *and* the high-water file beside it (both are the service's to
write): the next start reads the broker's copy back, and refuses the journal that went back.
Junk or a head under another key on that topic moves nothing: nothing unsigned pulls a lever.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import uuid
from typing import TYPE_CHECKING

import aiomqtt
import msgspec
import pytest
from support.runtime.controller_keys import write_controller_key
from support.runtime.daemon import CONTROLLER, SITE, daemon, probe, write_config

from controller.events import FaultRecorded
from controller.journal.high_water import high_water_path, sign_head
from controller.runtime.checkpointing import StoredStateError
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.config.load import Config

HEAD_TOPIC = f"{SITE}/jackpot/v1/controller/{CONTROLLER}/head"


def keyed(tmp_path: Path, broker: Broker) -> tuple[Config, ControllerKey]:
    """A daemon's configuration with a controller key of its own, heads signed often."""
    config = write_config(tmp_path, broker=broker, mqtt=["t1"])
    key = write_controller_key(tmp_path)
    controller = dataclasses.replace(
        config.controller,
        key_file=str(tmp_path / "controller.key"),
        head_rows=1,
        head_interval_s=0.05,
    )
    return dataclasses.replace(config, controller=controller), key


async def rows_and_their_head(config: Config, broker: Broker, count: int) -> int:
    """Run the daemon, journal ``count`` rows, wait until the broker retains their head."""
    async with daemon(config) as running, probe(broker, HEAD_TOPIC) as watch:
        for _ in range(count):
            fault = FaultRecorded(f"fault-{uuid.uuid4()}", "2026-12-01T00:00:00.000Z", "t", "r")
            await running.runtime.sequencer.submit(fault)
        head = running.runtime.journal.head[0]
        await watch.until(
            lambda w: any(json.loads(p)["seq"] >= head for p in w.payloads(HEAD_TOPIC)),
            f"the signed head of row {head} retained",
        )
    return head


async def test_a_journal_rolled_back_with_its_high_water_file_is_refused_by_the_brokers_copy(
    tmp_path: Path, mosquitto: Broker
) -> None:
    config, _key = keyed(tmp_path, mosquitto)
    await rows_and_their_head(config, mosquitto, 3)
    journal = tmp_path / "journal.db"
    mark = high_water_path(str(journal))
    backup = tmp_path / "backup"
    backup.mkdir()
    for path in (journal, mark):
        shutil.copy(path, backup / path.name)
    head = await rows_and_their_head(config, mosquitto, 5)  # acknowledged, then rolled back
    for path in (journal, mark):
        path.unlink()
        shutil.copy(backup / path.name, path)
    for leftover in (tmp_path / "journal.db-wal", tmp_path / "journal.db-shm"):
        leftover.unlink(missing_ok=True)
    with pytest.raises(StoredStateError) as refused:
        async with daemon(config):
            pass  # pragma: no cover - it does not start
    found = re.search(r"the journal went back: the controller signed row (\d+)", str(refused.value))
    assert found is not None, refused.value
    assert int(found[1]) >= head  # the stop's checkpoint and head follow the last row


async def test_junk_or_a_head_under_another_key_on_the_topic_moves_nothing(
    tmp_path: Path, mosquitto: Broker
) -> None:
    config, _key = keyed(tmp_path, mosquitto)
    head = await rows_and_their_head(config, mosquitto, 2)
    stranger = ControllerKey.generate()
    forged = sign_head(stranger, CONTROLLER, "", (head + 1_000, "ee" * 32), "2026-12-01T00:00Z")
    for payload in (b"{not json", msgspec.json.encode(forged)):
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            await client.publish(HEAD_TOPIC, payload, qos=1, retain=True)
        async with daemon(config) as running:  # it starts: the junk is passed over
            assert running.runtime.journal.head[0] >= head
