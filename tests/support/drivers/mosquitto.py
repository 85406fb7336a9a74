"""A real mosquitto broker for the integration tests, as a pytest fixture that can restart it.

``mosquitto`` (the fixture) writes a configuration into the test's temporary directory (a
listener on 127.0.0.1 and a free port, anonymous clients, ``set_tcp_nodelay true``, persistence
in the temporary directory, the log on stderr, kept in ``mosquitto.log``), starts
``/usr/sbin/mosquitto -c <conf>`` and waits until the port accepts connections. The
:class:`Broker` it yields can :meth:`~Broker.stop` (SIGTERM: mosquitto saves its persistence
file), :meth:`~Broker.kill` (SIGKILL: it saves nothing) and :meth:`~Broker.start` again on the
same port with the same persistence directory, to test broker restarts.

There is no skipping: without mosquitto the fixture fails and says how to install it (CI
installs it). Set ``MOSQUITTO`` to use another binary.

The fixture function is ``mosquitto_fixture``, registered under the name ``mosquitto`` (so that
a test's ``mosquitto`` argument shadows no import). Register it for every test module in
``tests/conftest.py`` with ``pytest_plugins = ["support.drivers.mosquitto"]``.
"""

from __future__ import annotations

import os
import pwd
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

MOSQUITTO: Final = os.environ.get("MOSQUITTO", "/usr/sbin/mosquitto")
START_TIMEOUT_S: Final = 10.0
STOP_TIMEOUT_S: Final = 10.0
HOST: Final = "127.0.0.1"


def free_port() -> int:
    """A TCP port nobody listens on now (the broker binds it right after)."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass
class Broker:
    """One mosquitto process, restartable on the same port and persistence directory."""

    directory: Path
    port: int = field(default_factory=free_port)
    host: str = HOST
    process: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        """The configuration file."""
        return self.directory / "mosquitto.conf"

    @property
    def log_file(self) -> Path:
        """Everything the broker logged, over all its runs."""
        return self.directory / "mosquitto.log"

    def log(self) -> str:
        """The broker's log so far."""
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def write_config(self) -> None:
        """The configuration: what the controller requires of a broker, on a private port."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            f"listener {self.port} {self.host}\n"
            "allow_anonymous true\n"
            # Without it QoS 1 throughput collapses (Nagle, delayed ACK); docs/mqtt.md "The broker".
            "set_tcp_nodelay true\n"
            "persistence true\n"
            f"persistence_location {self.directory}/\n"
            "persistence_file mosquitto.db\n"
            "max_queued_messages 100000\n"
            "log_dest stderr\n"
            "log_type all\n"
            # As root, mosquitto would switch to the "mosquitto" user and lose the test's
            # directory; naming the current user keeps it as it is.
            f"user {pwd.getpwuid(os.getuid()).pw_name}\n"
        )

    def running(self) -> bool:
        """Whether the process is alive."""
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the broker (again) and wait until its port accepts connections."""
        if self.running():
            return
        if not Path(MOSQUITTO).is_file():
            pytest.fail(
                f"mosquitto not found at {MOSQUITTO}: the MQTT tests need a real broker "
                "(apt-get install mosquitto, or set MOSQUITTO to its path)",
                pytrace=False,
            )
        if not self.config.exists():
            self.write_config()
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                [MOSQUITTO, "-c", str(self.config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + timeout
        while True:
            if not self.running():
                pytest.fail(f"mosquitto exited at start:\n{self.log()}", pytrace=False)
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
            except OSError:
                if time.monotonic() > deadline:
                    self.kill()
                    pytest.fail(f"mosquitto did not listen within {timeout}s:\n{self.log()}")
                # Polling is unavoidable here: nothing tells us when the port opens.
                time.sleep(0.02)
            else:
                return

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop the broker cleanly (it saves its persistence file) and wait for it."""
        self._end(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """Kill the broker (it saves nothing: what it had not saved is lost)."""
        self._end(signal.SIGKILL, STOP_TIMEOUT_S)

    def restart(self) -> None:
        """Stop, then start on the same port with the same persistence."""
        self.stop()
        self.start()

    def _end(self, how: signal.Signals, timeout: float) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(how)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        self.process = None

    def close(self) -> None:
        """Stop the broker for good (fixture teardown)."""
        self.kill()


@pytest.fixture(name="mosquitto")
def mosquitto_fixture(tmp_path: Path) -> Iterator[Broker]:
    """A running mosquitto on a free port, persistence in ``tmp_path``; stopped afterwards."""
    broker = Broker(tmp_path / "mosquitto")
    broker.start()
    try:
        yield broker
    finally:
        broker.close()
