"""Hardening: secrets stay out of logs, metrics and the journal.

docs/faults.md, "Secrets and hardening"; docs/security.md.

* **The broker password.** The daemon (``python -m controller run``, at ``--log-level DEBUG``)
  logs in to a real mosquitto that refuses anonymous clients and knows one user (written with
  ``mosquitto_passwd``), with ``[broker] username`` and a ``password_file`` holding a
  distinctive password. It must really be connected (both of its clients on ``/metrics``, its
  retained ``online`` on the controller's status topic), and the password must appear nowhere:
  not in its log, its standard output, ``/metrics``, ``/api/state``, ``/healthz`` or the
  journal file. With a wrong password in the file it must say that the broker refused it,
  without printing the password it tried.
* **A password file open to other users** is refused at start-up: exit status 1, one line on
  stderr in the ``file: key: reason`` form, nothing started and no journal created. One
  closed to others (0600, 0640) is accepted.
* **Operators' keys and passphrases** (``jackpotd operator key`` and ``operator add``,
  passphrases from ``$JACKPOTD_NEW_PASSPHRASE``, ``$JACKPOTD_PASSPHRASE`` and
  ``--passphrase-file``): a key file is written 0600 and never overwritten; the journal holds
  only public keys. No passphrase and no private key reaches the journal file, its WAL, or
  what the commands print, as text, hex or base64; a wrong passphrase is refused and journaled
  as a failed authentication that does not hold the passphrase tried.

Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from support.drivers.mosquitto import MOSQUITTO, Broker
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

from controller.security.keys import open_key, public_key_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 20.0
USER = "jackpotd-pit"
PASSWORD = f"Hunter2-{uuid.uuid4().hex}"
"""Distinctive: it cannot appear anywhere by chance."""
WRONG_PASSWORD = f"NotIt-{uuid.uuid4().hex}"
SITE = "hard"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def until(condition: Callable[[], bool], what: str, seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds:g} s waiting for {what}"
        time.sleep(0.05)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def encodings(secret: str | bytes) -> list[bytes]:
    """The secret as text (or bytes), hex and base64: none of them may be written anywhere."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return [raw, raw.hex().encode(), base64.b64encode(raw), base64.b64encode(raw).rstrip(b"=")]


def assert_absent(secret: str | bytes, where: str, data: bytes | str) -> None:
    blob = data.encode() if isinstance(data, str) else data
    for form in encodings(secret):
        assert form not in blob, f"the secret is in {where}"


@pytest.fixture
def passworded_broker(tmp_path: Path) -> Iterator[Broker]:
    """A real mosquitto that refuses anonymous clients and knows USER with PASSWORD."""
    mosquitto_passwd = shutil.which("mosquitto_passwd") or str(
        Path(MOSQUITTO).parent.parent / "bin" / "mosquitto_passwd"
    )
    broker = Broker(tmp_path / "mosquitto")
    broker.directory.mkdir(parents=True)
    passwords = broker.directory / "passwd"
    subprocess.run(
        [mosquitto_passwd, "-c", "-b", str(passwords), USER, PASSWORD],
        check=True, capture_output=True, timeout=WAIT_S,
    )  # fmt: skip
    passwords.chmod(0o600)
    broker.config.write_text(
        f"listener {broker.port} {broker.host}\n"
        "allow_anonymous false\n"
        f"password_file {passwords}\n"
        "set_tcp_nodelay true\n"
        "persistence false\n"
        "log_dest stderr\n"
        "log_type all\n"
        f"user {pwd.getpwuid(os.getuid()).pw_name}\n"
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.close()


def write_config(
    folder: Path, *, broker: Broker | None, password: str, mode: int, port: int | None = None
) -> Path:
    """A daemon with a [broker] user and password file, and one simulated table.

    Without ``broker`` the [broker] names a port nobody listens on (for start-up refusals).
    """
    host, broker_port = (broker.host, broker.port) if broker else ("127.0.0.1", free_port())
    folder.mkdir(parents=True, exist_ok=True)
    password_file = folder / "mqtt-password"
    password_file.write_text(password + "\n")
    password_file.chmod(mode)
    config = folder / "jackpotd.toml"
    write_controller_key(folder)
    config.write_text(
        f'[controller]\nsite = "{SITE}"\nid = "{folder.name}"\njournal = "journal.db"\n'
        f"{KEY_LINE}\n"
        f'[broker]\nhost = "{host}"\nport = {broker_port}\nusername = "{USER}"\n'
        'password_file = "mqtt-password"\nkeepalive_s = 5\n'
        "backoff_initial_s = 0.05\nbackoff_cap_s = 0.5\n\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f"[web]\nport = {port or free_port()}\n\n[simulator]\nround_interval_s = 0.05\n"
    )
    return config


def start(config: Path, log: Path) -> subprocess.Popen[str]:
    """``jackpotd run`` at ``--log-level DEBUG`` on an approved site, its log in ``log``."""
    approved_site(config)
    with log.open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(config),
             "--log-level", "DEBUG"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
        )  # fmt: skip


def stop(daemon: subprocess.Popen[str]) -> tuple[int, str]:
    """SIGTERM; the exit status and what it printed."""
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
    try:
        out, _ = daemon.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        daemon.kill()
        out, _ = daemon.communicate(timeout=WAIT_S)
    return daemon.returncode, out


def connected_clients(metrics: str) -> dict[str, float]:
    """``jackpotd_mqtt_connected`` by client."""
    found = re.findall(
        r'^jackpotd_mqtt_connected\{client="([^"]+)"\} (\S+)$', metrics, re.MULTILINE
    )
    return {client: float(value) for client, value in found}


async def retained_status(broker: Broker, controller_id: str) -> bytes:
    """What a display logging in as USER reads on the controller's status topic."""
    topic = f"{SITE}/jackpot/v1/controller/{controller_id}/status"
    async with (
        asyncio.timeout(WAIT_S),
        aiomqtt.Client(broker.host, broker.port, username=USER, password=PASSWORD) as client,
    ):
        await client.subscribe(topic, qos=1)
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            return message.payload
    raise AssertionError("no status")  # pragma: no cover - the loop returns or times out


@pytest.mark.slow
def test_security_the_broker_password_is_in_no_log_metric_page_or_journal(
    passworded_broker: Broker, tmp_path: Path
) -> None:
    port = free_port()
    folder = tmp_path / "pit-1"
    config = write_config(
        folder, broker=passworded_broker, password=PASSWORD, mode=0o640, port=port
    )
    log = tmp_path / "pit-1.log"
    daemon = start(config, log)
    url = f"http://127.0.0.1:{port}/"
    pages: dict[str, str] = {}
    try:
        assert daemon.stdout is not None
        assert "meter display" in daemon.stdout.readline(), log.read_text()

        def logged_in() -> bool:
            clients = connected_clients(get(url + "metrics")[1])
            return len(clients) == 2 and set(clients.values()) == {1.0}

        until(logged_in, "both MQTT clients to log in")
        # Really logged in: its retained "online" is on the broker for an authorised reader.
        assert asyncio.run(retained_status(passworded_broker, "pit-1")) == b"online"
        until(
            lambda: json.loads(get(url + "api/state")[1])["pools"][0]["meter_cents"] > 1_000_000,
            "play",
        )
        for page in ("metrics", "api/state", "healthz", ""):
            status, pages[page] = get(url + page)
            assert status == 200, page
    finally:
        code, out = stop(daemon)
    assert code == 0, log.read_text()
    text = log.read_text()
    assert f"connected to {passworded_broker.host}:{passworded_broker.port}" in text
    assert "DEBUG" in text, "the daemon ran at --log-level DEBUG"
    assert_absent(PASSWORD, "the daemon's log", text)
    assert_absent(PASSWORD, "its standard output", out)
    for page, body in pages.items():
        assert_absent(PASSWORD, f"/{page}", body)
    for file in folder.glob("journal.db*"):
        assert_absent(PASSWORD, file.name, file.read_bytes())
    # Nor does checking the configuration show it (the summary names the user only).
    for argv in (("config", "check", str(config)), ("config", "check", "--json", str(config))):
        checked = jackpotd(*argv)
        assert checked.returncode == 0, checked.stderr
        assert USER in checked.stdout
        assert_absent(PASSWORD, " ".join(argv[:3]), checked.stdout + checked.stderr)


@pytest.mark.slow
def test_security_a_wrong_password_is_refused_and_not_logged(
    passworded_broker: Broker, tmp_path: Path
) -> None:
    port = free_port()
    folder = tmp_path / "pit-2"
    config = write_config(
        folder, broker=passworded_broker, password=WRONG_PASSWORD, mode=0o600, port=port
    )
    log = tmp_path / "pit-2.log"
    daemon = start(config, log)
    url = f"http://127.0.0.1:{port}/"
    try:
        assert daemon.stdout is not None
        assert "meter display" in daemon.stdout.readline(), log.read_text()
        until(lambda: "not authori" in log.read_text().lower(), "the broker's refusal logged")
        metrics = get(url + "metrics")[1]
        assert set(connected_clients(metrics).values()) == {0.0}
    finally:
        code, out = stop(daemon)
    assert code == 0, log.read_text()
    text = log.read_text()
    refusals = [line for line in text.splitlines() if "not authori" in line.lower()]
    assert refusals, text
    for secret in (WRONG_PASSWORD, PASSWORD):
        assert_absent(secret, "the daemon's log", text)
        assert_absent(secret, "its standard output", out)
        assert_absent(secret, "/metrics", metrics)


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o606, 0o666], ids=lambda mode: f"{mode:o}")
def test_security_a_password_file_open_to_others_is_refused_at_start_up(
    tmp_path: Path, mode: int
) -> None:
    folder = tmp_path / "pit-3"
    config = write_config(folder, broker=None, password=PASSWORD, mode=mode)
    done = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    password_file = folder / "mqtt-password"
    assert lines[0] == (
        f"jackpotd: {config}: broker.password_file: {password_file} is open to every user "
        f"(mode {mode:o}); chmod o-rwx it"
    )
    assert_absent(PASSWORD, "the error", done.stderr)
    assert not (folder / "journal.db").exists(), "refused before anything was opened"


def test_security_a_password_written_into_the_configuration_is_refused_without_echoing_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "pit-4"
    config = write_config(folder, broker=None, password=PASSWORD, mode=0o600)
    text = config.read_text().replace('password_file = "mqtt-password"', f'password = "{PASSWORD}"')
    config.write_text(text)
    for argv in (("run", "--config", str(config)), ("config", "check", str(config))):
        done = jackpotd(*argv)
        assert done.returncode == 1
        assert done.stderr == (
            f"jackpotd: {config}: broker.password: Object contains unknown field `password`\n"
        )
        assert_absent(PASSWORD, f"the error of {argv[0]}", done.stdout + done.stderr)
    assert not (folder / "journal.db").exists()


def jackpotd(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m controller ARGV`` with only the passphrase variables given (none inherited)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("JACKPOTD_")}
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
        env=environment | (env or {}), stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.slow
def test_security_operators_keys_and_passphrases_never_reach_the_journal_or_the_output(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "journal.db")
    passphrases = {name: f"Pass-{uuid.uuid4().hex[:16]}" for name in ("Morgan", "Dana", "Lee")}
    wrong = f"Bad-{uuid.uuid4().hex[:16]}"
    key_files = {name: tmp_path / f"{name.lower()}.key" for name in passphrases}
    passphrase_files = {name: tmp_path / f"{name.lower()}.passphrase" for name in passphrases}
    for name, passphrase in passphrases.items():
        passphrase_files[name].write_text(passphrase + "\n")
    manager = str(key_files["Morgan"])
    runs = [
        # Each operator makes their key: the new passphrase from the environment or a file.
        jackpotd("operator", "key", "Morgan", "--out", manager,
                 env={"JACKPOTD_NEW_PASSPHRASE": passphrases["Morgan"]}),
        jackpotd("operator", "key", "Dana", "--out", str(key_files["Dana"]),
                 "--passphrase-file", str(passphrase_files["Dana"])),
        jackpotd("operator", "key", "Lee", "--out", str(key_files["Lee"]),
                 env={"JACKPOTD_NEW_PASSPHRASE": passphrases["Lee"]}),
        # The first operator, a manager, signs their own enrollment ($JACKPOTD_PASSPHRASE);
        # then enrolls the supervisors (the passphrase from the environment, then a file).
        jackpotd("operator", "add", "Morgan", "--role", "manager", "--public-key", manager,
                 "--key", manager, "--db", database,
                 env={"JACKPOTD_PASSPHRASE": passphrases["Morgan"]}),
        jackpotd("operator", "add", "Dana", "--role", "supervisor",
                 "--public-key", str(key_files["Dana"]), "--key", manager, "--db", database,
                 env={"JACKPOTD_PASSPHRASE": passphrases["Morgan"]}),
        jackpotd("operator", "add", "Lee", "--role", "supervisor",
                 "--public-key", str(key_files["Lee"]), "--key", manager,
                 "--passphrase-file", str(passphrase_files["Morgan"]), "--db", database),
    ]  # fmt: skip
    assert [run.returncode for run in runs] == [0] * 6, [run.stderr for run in runs]
    for path in key_files.values():
        assert path.stat().st_mode & 0o777 == 0o600, path
    again = jackpotd(
        "operator", "key", "Morgan", "--out", manager,
        env={"JACKPOTD_NEW_PASSPHRASE": passphrases["Morgan"]},
    )  # fmt: skip
    assert again.returncode == 1
    assert "cannot create the key file: File exists" in again.stderr
    refused = jackpotd(
        "operator", "revoke", "Lee", "--reason", "test", "--key", manager, "--db", database,
        env={"JACKPOTD_PASSPHRASE": wrong},
    )  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr == f"jackpotd: {manager}: wrong passphrase for Morgan\n"
    runs += [
        again,
        refused,
        jackpotd("operator", "list", "--db", database),
        jackpotd("verify", "--db", database, "--json"),
        jackpotd("meters", "--db", database, "--json"),
    ]
    assert [run.returncode for run in runs[-3:]] == [0, 0, 0]
    assert json.loads(runs[-2].stdout)["ok"] is True
    private = {name: open_key(path, passphrases[name])[1] for name, path in key_files.items()}
    public = {name: public_key_text(key) for name, key in private.items()}
    for name, key in public.items():  # each operator's `operator key` printed it
        assert f"key of {name}, public key {key}" in "".join(run.stdout for run in runs[:3])
    assert (
        runs[-3].stdout.splitlines()
        == [
            "operator\trole\tkey\tstate",  # piped: a header, then tab-separated rows
            f"Dana\tsupervisor\t{public['Dana'][:12]}...\t0 failed attempts",
            f"Lee\tsupervisor\t{public['Lee'][:12]}...\t0 failed attempts",
            f"Morgan\tmanager\t{public['Morgan'][:12]}...\t1 failed attempts",
        ]
    )

    # The journal holds public keys and the failed attempt (who, what), never a secret.
    journal = (tmp_path / "journal.db").read_bytes()
    for text in public.values():
        assert text.encode() in journal
    assert b"authentication-failed" in journal
    secrets = [*passphrases.values(), wrong]
    files = sorted(tmp_path.glob("journal.db*"))
    for secret in secrets:
        for file in [*files, *key_files.values()]:
            assert_absent(secret, file.name, file.read_bytes())
        for run in runs:
            assert_absent(secret, f"the output of {run.args[3:5]}", run.stdout + run.stderr)
    for name, private_key in private.items():
        raw = private_key.private_bytes_raw()
        for file in [*files, *key_files.values()]:
            assert_absent(raw, f"{file.name} ({name}'s private key)", file.read_bytes())
        for run in runs:
            assert_absent(raw, f"the output of {run.args[3:5]}", run.stdout + run.stderr)
