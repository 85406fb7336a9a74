"""The processes of the high-availability lab: any long-running service, and a Patroni node.

A :class:`Service` runs in a session of its own, its output appended to its log, and can be
started again, stopped (SIGTERM), killed (SIGKILL to its process group), paused (SIGSTOP) and
resumed (SIGCONT): the cluster's etcd members, Patroni, HAProxy, and whatever a test adds (a
chaos test's jackpotd). A :class:`PatroniNode` adds the PostgreSQL that Patroni starts, which
lives outside Patroni's process group (Patroni starts it in a session of its own, and each of
its children makes one too): its processes are found from its pid file and ``/proc``.

Run as root, Patroni runs as the ``postgres`` system user (``initdb`` and PostgreSQL refuse
root), as in ``support.journal.postgres``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from support.drivers.mosquitto import HOST
from support.journal.postgres import INSTALL, SERVICE_USER

if TYPE_CHECKING:
    from collections.abc import Sequence

    from support.ha.ha_lab import NodePorts

STOP_TIMEOUT_S: Final = 30.0


def server_account() -> pwd.struct_passwd | None:
    """The account Patroni runs as: ``postgres`` when we are root, else none (ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pytest.fail(f"no {SERVICE_USER} system user to run PostgreSQL as: {INSTALL}", pytrace=False)


@dataclass
class Service:
    """One long-running process of the cluster, in a session of its own, its output in a log."""

    name: str
    command: Sequence[str]
    log_file: Path
    account: pwd.struct_passwd | None = None
    environment: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it (again); its output is added to its log."""
        if self.running():
            return
        environment = {**os.environ, **self.environment}
        uid: int | None = None
        gid: int | None = None
        groups: list[int] | None = None
        if self.account is not None:
            uid, gid, groups = self.account.pw_uid, self.account.pw_gid, []
            environment["HOME"] = str(self.log_file.parent)
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=environment,
                start_new_session=True,
                user=uid,
                group=gid,
                extra_groups=groups,
            )

    def running(self) -> bool:
        """Whether the process is alive (a stopped one, SIGSTOP, counts as alive)."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        """The process id (it must have been started)."""
        assert self.process is not None, f"{self.name} was never started"
        return self.process.pid

    def signal(self, signum: signal.Signals) -> None:
        """Send ``signum`` to its whole process group (its children, but PostgreSQL's)."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signum)

    def pause(self) -> None:
        """SIGSTOP: it holds its sockets and answers nothing."""
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT."""
        self.signal(signal.SIGCONT)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM and wait for it to exit; SIGKILL after ``timeout``."""
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL to its process group, and reap it."""
        self.signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(STOP_TIMEOUT_S)

    def wait(self, timeout: float) -> int:
        """Wait for it to exit; its exit status."""
        assert self.process is not None, f"{self.name} was never started"
        return self.process.wait(timeout)

    def log(self) -> str:
        """Its output so far."""
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


@dataclass
class PatroniNode:
    """One node: Patroni and the PostgreSQL it runs."""

    name: str
    directory: Path
    ports: NodePorts
    patroni: Service

    @property
    def data(self) -> Path:
        """PostgreSQL's data folder."""
        return self.directory / "postgres" / "data"

    @property
    def config(self) -> Path:
        """Patroni's configuration file."""
        return self.directory / "patroni.yml"

    def url(self, database: str = "postgres") -> str:
        """A superuser's URL of this node's PostgreSQL, not through HAProxy."""
        return f"postgresql://postgres@{HOST}:{self.ports.postgres}/{database}"

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid, from its pid file."""
        try:
            first = (self.data / "postmaster.pid").read_text().split("\n", 1)[0]
        except (FileNotFoundError, PermissionError):
            return None
        pid = int(first) if first.strip().isdigit() else None
        if pid is None:
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        return pid

    def postgres_pids(self) -> list[int]:
        """The postmaster and its children (each child in a session of its own)."""
        if (postmaster := self.postmaster_pid()) is None:
            return []
        return [postmaster, *_children(postmaster)]

    def signal_postgres(self, signum: signal.Signals) -> None:
        """Send ``signum`` to the postmaster and to every process it started."""
        for pid in self.postgres_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def kill_postgres(self) -> None:
        """SIGKILL to every process of PostgreSQL at once; Patroni, alive, starts it again."""
        self.signal_postgres(signal.SIGSTOP)
        self.signal_postgres(signal.SIGKILL)

    def crash(self) -> None:
        """SIGKILL to Patroni and PostgreSQL together: the node is lost at once."""
        self.signal_postgres(signal.SIGSTOP)
        self.patroni.kill()
        self.signal_postgres(signal.SIGKILL)

    def start(self) -> None:
        """Start Patroni (again); it starts PostgreSQL."""
        self.patroni.start()

    def stop(self) -> None:
        """Stop Patroni cleanly: it stops PostgreSQL first (fast shutdown), then exits."""
        self.patroni.stop()


def _children(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return found
