"""The controller's checkpoints, retained on a real broker: a head kept where the journal is not.

The daemon (``serve``, in-process, with a simulated table and a real mosquitto) journals a
signed checkpoint every ``checkpoint_interval_s`` while rows come in, and its MQTT sink retains
the last one on ``<site>/jackpot/v1/controller/<id>/checkpoint``. Whoever can write the journal
file cannot change what the broker retains: a subscriber saves the payload, and that payload is
an anchor, its signature checked with the controller's public key (``jackpotd verify
--anchor``), which a rebuilt journal fails and a payload altered on its way fails too.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from support.drivers.mqtt_watch import watching
from support.runtime.controller_keys import KEY_LINE, write_controller_key

from controller.config.load import load_config
from controller.ledger_journal.sqlite import verify
from controller.service.wiring import serve
from drivers.mqtt.outgoing import decode_checkpoint
from drivers.mqtt.topics import TopicError, Topics

if TYPE_CHECKING:
    from support.drivers.mosquitto import Broker

    from controller.config.load import Config

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 20.0
SITE = "ckpt"
CONTROLLER = "pit-9"
TOPIC = Topics(SITE).controller_checkpoint(CONTROLLER)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_config(folder: Path, broker: Broker) -> Config:
    config = folder / "jackpotd.toml"
    config.write_text(
        f'[controller]\nsite = "{SITE}"\nid = "{CONTROLLER}"\njournal = "journal.db"\n'
        f"{KEY_LINE}checkpoint_interval_s = 0.2\n\n"
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f'[web]\nhost = "127.0.0.1"\nport = {free_port()}\n\n'
        "[simulator]\nround_interval_s = 0.02\n"
    )
    return load_config(config)


def jackpotd(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *map(str, argv)],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def retained(broker: Broker) -> bytes:
    """What a subscriber arriving now reads on the checkpoint topic."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe(TOPIC, qos=1)
        async with watching(client, WAIT_S) as watch:
            await watch.until(lambda w: bool(w.payloads(TOPIC)), "the retained checkpoint")
            (message,) = [m for m in watch.messages if m.topic.matches(TOPIC)]
            assert message.retain
            assert isinstance(message.payload, bytes)
            return message.payload


async def run_until_checkpoints_are_retained(config: Config, broker: Broker) -> bytes:
    """The daemon, until the broker has retained a checkpoint made while it played."""
    stop = asyncio.Event()
    daemon = asyncio.create_task(serve(config, stop))
    try:
        async with aiomqtt.Client(broker.host, broker.port) as client:
            await client.subscribe(TOPIC, qos=1)
            async with watching(client, WAIT_S) as watch:
                # The second one at least was made by the schedule, while rounds were played.
                await watch.until(lambda w: len(w.payloads(TOPIC)) >= 2, "two checkpoints")
                payload = watch.payloads(TOPIC)[-1]
                assert isinstance(payload, bytes)
    finally:
        stop.set()
        async with asyncio.timeout(WAIT_S):
            runtime = await daemon
        assert runtime is not None
        runtime.journal.close()
    return payload


@pytest.mark.slow
def test_the_last_checkpoint_is_retained_on_the_broker_and_anchors_the_journal(
    mosquitto: Broker, tmp_path: Path
) -> None:
    key = write_controller_key(tmp_path)
    config = write_config(tmp_path, mosquitto)
    payload = asyncio.run(run_until_checkpoints_are_retained(config, mosquitto))
    published = decode_checkpoint(payload)
    journal = tmp_path / "journal.db"
    report = verify(journal, keys=[key.public_key])
    assert report.ok, report.problems
    journaled = {summary.row: summary for summary in report.checkpoints}
    assert published.row in journaled
    assert (published.seq, published.hash) == (
        journaled[published.row].head_seq, journaled[published.row].head_hash,
    )  # fmt: skip
    assert (published.controller, published.key_id) == (CONTROLLER, key.key_id)
    # The broker keeps the last one for whoever comes later (a monitor saving anchors).
    late = decode_checkpoint(asyncio.run(retained(mosquitto)))
    assert late.row in journaled
    assert late.row >= published.row
    # A saved payload is an anchor, signed: it holds against this journal...
    anchors = tmp_path / "anchors.jsonl"
    anchors.write_text(
        json.dumps({"controller_key": key.public_key}) + "\n" + payload.decode() + "\n"
    )
    done = jackpotd("verify", "--db", journal, "--anchor", anchors)
    assert done.returncode == 0, done.stderr
    assert "anchors: 1 saved heads are in the chain" in done.stdout
    # ...and a payload altered on its way (another meter) fails its signature.
    altered = json.loads(payload)
    altered["meters"] = {pool: cents + 100_000 for pool, cents in altered["meters"].items()}
    anchors.write_text(
        json.dumps({"controller_key": key.public_key}) + "\n" + json.dumps(altered) + "\n"
    )
    refused = jackpotd("verify", "--db", journal, "--anchor", anchors)
    assert refused.returncode == 1
    assert f"anchor {anchors}:2: its signature does not verify" in refused.stderr


def test_the_checkpoint_topic_is_under_the_controllers_own_level() -> None:
    assert f"{SITE}/jackpot/v1/controller/{CONTROLLER}/checkpoint" == TOPIC
    with pytest.raises(TopicError):
        Topics(SITE).controller_checkpoint("bad/id")
