"""A machine of its own for a page's commands: private mounts and network, real users, as root.

The operator path of docs/operations.md writes where a controller's host keeps things:
``/opt/jackpotd``, ``/etc/jackpotd``, ``/etc/credstore``, ``/var/lib/jackpotd``,
``/run/jackpotd``, the users and groups in ``/etc/passwd``, the units in ``/etc/systemd``. To
run it as written without touching this machine, :func:`scratch_root` holds a private mount
and network namespace (``unshare``; the tests run as root) in which ``/etc``, ``/opt``,
``/usr``, ``/var``, ``/root``, ``/home`` and ``/run`` are overlays whose writes land in the
test's folder, ``/media`` (the operators' key tokens) and ``/tmp`` are empty, and loopback is
the namespace's own (the page's ``127.0.0.1:8080`` and ``:8883`` collide with nothing; a
command that must reach the package index runs on this machine's network instead). The
users the page creates (systemd-sysusers, useradd) are real accounts there, with their own
uids, whose rights the kernel checks as anywhere; they vanish with the namespace.

:meth:`ScratchRoot.bash` runs a block's text with ``bash -euo pipefail`` as root or as an
account (``setpriv``, the account's groups as ``/etc/group`` has them at that moment);
:meth:`ScratchRoot.upper` is where a file written inside is read from outside.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

OVERLAID: Final = ("etc", "opt", "usr", "var", "root", "home", "run")
EMPTY: Final = {"media": "0755", "tmp": "1777"}
PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
READY: Final = "namespace ready"


@dataclass
class ScratchRoot:
    """The namespace's holder process and the folder its overlays write into."""

    folder: Path
    holder: subprocess.Popen[str]

    def upper(self, inside: str) -> Path:
        """Where ``inside`` (an absolute path under an overlaid folder), once written, lies."""
        return self.folder / "upper" / inside.lstrip("/")

    def enter(self, *, network_only: bool = False, host_network: bool = False) -> list[str]:
        """The prefix that runs a command inside: its mounts and its loopback.

        ``network_only``: the loopback alone (a broker, a table); ``host_network``: the mounts
        alone, on this machine's network (an installation reaching the package index).
        """
        spaces = ["-n"] if network_only else ["-m"] if host_network else ["-m", "-n"]
        return ["nsenter", "-t", str(self.holder.pid), *spaces, "--"]

    def bash(
        self,
        text: str,
        *,
        account: str = "root",
        cwd: str = "/",
        environment: Mapping[str, str],
        timeout: float = 300.0,
        host_network: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """``text`` run by ``bash -euo pipefail`` as ``account`` in ``cwd``, inside."""
        who = [] if account == "root" else [
            "setpriv", f"--reuid={account}", f"--regid={account}", "--init-groups", "--",
        ]  # fmt: skip
        # The folder entered as the account (env -C): nsenter's own --wd opens it outside.
        shell = ["env", "-C", cwd, "bash", "-euo", "pipefail", "-c", text]
        command = [*self.enter(host_network=host_network), *who, *shell]
        return run_group(command, dict(environment), timeout)

    def root(self, text: str, timeout: float = 60.0) -> str:
        """Setup as root inside (not a page's block): its output; it must succeed."""
        done = self.bash(text, environment={"PATH": PATH}, timeout=timeout)
        assert done.returncode == 0, f"{text}\n{done.stdout}{done.stderr}"
        return done.stdout


def run_group(
    command: list[str], environment: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``command`` in a session of its own, its whole group killed if it outlasts ``timeout``."""
    process = subprocess.Popen(
        command, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        out, err = process.communicate()
        err += f"\n(killed after {timeout:g} s)"
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def kill_group(pid: int) -> None:
    """SIGKILL to the process group ``pid`` leads, if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def mounts(folder: Path) -> str:
    """The holder's script: the overlays, the empty folders, loopback up; then it waits."""
    lines = ["set -eu", "ip link set lo up"]
    for name in OVERLAID:
        upper, work = folder / "upper" / name, folder / "work" / name
        upper.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        lines.append(f"mount -t overlay overlay -o lowerdir=/{name},upperdir={upper},"
                     f"workdir={work} /{name}")  # fmt: skip
    lines += [f"mount -t tmpfs -o mode={mode} tmpfs /{name}" for name, mode in EMPTY.items()]
    return "\n".join([*lines, f"echo '{READY}'", "exec sleep infinity"])


@contextlib.contextmanager
def scratch_root(folder: Path) -> Iterator[ScratchRoot]:
    """The namespace until the block ends; then every process left in it, and it, are gone.

    Write into :meth:`ScratchRoot.upper` paths before entering to give the inside files.
    """
    assert os.geteuid() == 0, "a scratch root needs root (unshare, mount, useradd)"
    script = mounts(folder)
    holder = subprocess.Popen(
        ["unshare", "--mount", "--net", "--propagation", "private", "bash", "-c", script],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()  # bounded: the script ends or says it is ready
        assert line.strip() == READY, f"{line}{holder.communicate(timeout=10)[1]}"
        yield ScratchRoot(folder, holder)
    finally:
        sweep(holder.pid)
        kill_group(holder.pid)
        holder.communicate(timeout=30)


def sweep(holder: int) -> None:
    """SIGKILL to every process but ``holder`` that is still in its mount namespace."""
    try:
        namespace = Path(f"/proc/{holder}/ns/mnt").readlink()
    except OSError:
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == holder:
            continue
        with contextlib.suppress(OSError):
            if (entry / "ns" / "mnt").readlink() == namespace:
                os.kill(int(entry.name), signal.SIGKILL)
