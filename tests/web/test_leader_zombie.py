"""A leader paused past its lease never answers ``GET /leader`` 200 again (docs/ha.md).

Two real ``jackpotd run`` processes, nodes ``pit-a`` and ``pit-b``, share one PostgreSQL
journal (tests/support/journal/postgres.py), as two controller nodes behind HAProxy do. ``pit-a``
leads; it is paused (SIGSTOP) past its lease, ``pit-b`` takes the sequencer over at the next
epoch and answers ``/leader``; then ``pit-a`` is woken (SIGCONT), the zombie. HAProxy asks
``/leader`` to know where to send signs and displays: the zombie must answer 503 or nothing,
never 200, and then step down (exit 75) at its first write or renewal, while ``pit-b`` goes on
leading.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from support.deploy.software_rig import seen_manifest
from support.ledger.approvals import now
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site, free_port

from controller.events import ManifestApproved
from controller.journal.location import DatabaseUrl
from controller.ledger_journal.postgres import PostgresJournal
from controller.runtime.step_down import FENCED

if TYPE_CHECKING:
    from collections.abc import Callable

    from support.drivers.mosquitto import Broker
    from support.ledger.approvals import Site

pytestmark = [pytest.mark.fault, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CHILD = os.environ | {"PYTHONPATH": str(ROOT)}
"""What the daemons run with: the environment the approved manifest was seen in."""
LEASE_S = 1.5
WAIT_S = 30.0


def config(folder: Path, node: str, journal: str, port: int, broker: Broker) -> Path:
    """A node's configuration: one pool, one MQTT table (quiet: nothing plays), its web port."""
    path = folder / f"{node}.toml"
    path.write_text(
        f'[controller]\nsite = "ha"\nid = "pit"\nnode = "{node}"\njournal = "{journal}"\n'
        f"lease_s = {LEASE_S}\n{KEY_LINE}\n"
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\n\n'
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "mqtt"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f'[web]\nhost = "127.0.0.1"\nport = {port}\n'
    )
    return path


def leader(port: int) -> tuple[int, dict[str, Any]] | None:
    """``GET /leader``: its status and body; None if nothing answers."""
    url = f"http://127.0.0.1:{port}/leader"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def approve(site: Site, path: Path, url: str) -> None:
    """A manager approves the software with ``path`` as its configuration, in the journal.

    Each node's file is its own (its node id, its web port), and start-up checks the one it
    runs against the last approval.
    """
    event = ManifestApproved(f"manifest-{uuid.uuid4()}", now(), *seen_manifest(path, CHILD), "mgr")
    with PostgresJournal(DatabaseUrl(url)) as journal:  # a supervisor's command: no fence
        assert journal.append(site.sign(event, "mgr")).applied


def pause_between_transactions(process: subprocess.Popen[str], url: str) -> None:
    """SIGSTOP the node while it has no transaction open on the journal (retried until so).

    A node paused inside a transaction holds the fence's row lock until the server ends its
    session (tests/journal/postgres/test_postgres_fence.py); the zombie here is the other case,
    a node that committed and then stopped, as a leader idle between renewals is nearly always.
    """
    with psycopg.connect(url, autocommit=True) as probe:
        for _attempt in range(200):
            process.send_signal(signal.SIGSTOP)
            busy = probe.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state <> 'idle'"
            ).fetchone()
            if busy is not None and busy[0] == 0:
                return
            process.send_signal(signal.SIGCONT)
    pytest.fail("the node was inside a transaction at every pause")


def start(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=CHILD,
    )  # fmt: skip
    assert process.stdout is not None
    assert "meter display" in process.stdout.readline(), process.communicate(timeout=WAIT_S)
    return process


def end(process: subprocess.Popen[str]) -> tuple[int, str]:
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=WAIT_S)
    return process.returncode, err


def test_a_leader_paused_past_its_lease_never_answers_leader_200_again(
    tmp_path: Path, postgres_url: str, mosquitto: Broker
) -> None:
    write_controller_key(tmp_path)
    seed = config(tmp_path, "seed", str(tmp_path / "seed.db"), free_port(), mosquitto)
    site = approved_site(seed)  # operators, the configuration and the software approved
    copied = subprocess.run(
        [sys.executable, "-m", "controller", "journal", "copy", "--from",
         str(tmp_path / "seed.db"), "--to", postgres_url],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    port_a, port_b = free_port(), free_port()
    path_a = config(tmp_path, "pit-a", postgres_url, port_a, mosquitto)
    path_b = config(tmp_path, "pit-b", postgres_url, port_b, mosquitto)
    approve(site, path_a, postgres_url)
    node_a = start(path_a)
    node_b: subprocess.Popen[str] | None = None
    try:
        until(lambda: (leader(port_a) or (0, {}))[0] == 200, "pit-a to lead")
        first = leader(port_a)
        assert first is not None
        epoch = first[1]["epoch"]
        assert first[1]["node"] == "pit-a"
        approve(site, path_b, postgres_url)
        pause_between_transactions(node_a, postgres_url)
        # pit-b waits out pit-a's lease, then takes the sequencer over at the next epoch.
        node_b = start(path_b)
        until(lambda: (leader(port_b) or (0, {}))[0] == 200, "pit-b to lead")
        taken = leader(port_b)
        assert taken is not None
        assert (taken[1]["node"], taken[1]["epoch"]) == ("pit-b", epoch + 1)
        node_a.send_signal(signal.SIGCONT)
        answers: list[int | None] = []
        deadline = time.monotonic() + WAIT_S
        while node_a.poll() is None:  # it answers 503 or nothing, then steps down
            assert time.monotonic() < deadline, f"the zombie did not step down: {answers}"
            answer = leader(port_a)
            answers.append(None if answer is None else answer[0])
            assert answers[-1] != 200, (answers, answer)
        status, err = end(node_a)
        assert status == FENCED, err
        assert "pit-b" in err
        after = leader(port_b)
        assert after is not None
        assert (after[0], after[1]["epoch"]) == (200, epoch + 1)
    finally:
        end(node_a)
        if node_b is not None:
            status, err = end(node_b)
            assert status == 0, err
