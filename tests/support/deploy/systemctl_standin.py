"""``systemctl`` where there is no systemd: the installed jackpotd unit, started as it says.

The machines the tests run on have no systemd as PID 1, so the operator path's ``systemctl``
lines (docs/operations.md; tests/docs/test_operator_path.py) run this instead, on the unit
deploy/install.sh installed (``/etc/systemd/system/jackpotd.service``). It does what systemd
does for that unit and nothing more:

* ``start`` runs ``ExecStart=`` as ``User=``/``Group=`` with the user's groups and
  ``SupplementaryGroups=``, in ``WorkingDirectory=`` under ``UMask=``, with the unit's
  ``Environment=`` and systemd's variables (``CONFIGURATION_DIRECTORY``, ``STATE_DIRECTORY``),
  the ``LoadCredential=`` files copied into ``$CREDENTIALS_DIRECTORY`` (the service's alone),
  in a session of its own, and waits for ``READY=1`` on ``$NOTIFY_SOCKET`` (``Type=notify``);
  no watchdog (``WATCHDOG_USEC`` is not set: nobody would read the keep-alives).
* ``stop`` sends ``KillSignal=`` (SIGTERM) to the service's process group and waits for its
  exit (a pidfd: the service is not this process's child), SIGKILL after ``TimeoutStopSec=``.
* ``restart``, ``enable [--now]``, ``status``, ``is-active``, ``daemon-reload``.

The service's process id is in ``$JACKPOTD_STANDIN_STATE/<unit>.pid`` (the test's teardown
stops its process group from there) and what it printed in ``<unit>.log``. Standard library
only: it runs on the system's ``python3``.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

STATE = Path(os.environ.get("JACKPOTD_STANDIN_STATE", "/run/jackpotd-standin"))
UNITS = Path("/etc/systemd/system")
SERVED = ("jackpotd",)
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START_S = 90.0


def read_unit(name: str) -> dict[str, list[str]]:
    """The unit's ``[Service]`` settings, each with every value it is given, in order."""
    settings: dict[str, list[str]] = {}
    section = ""
    for line in (UNITS / f"{name}.service").read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            section = line.strip()
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def last(settings: dict[str, list[str]], key: str, default: str = "") -> str:
    return settings.get(key, [default])[-1]


def pid_of(name: str) -> int | None:
    """The running service's process id, None when it is not running."""
    try:
        pid = int((STATE / f"{name}.pid").read_text(encoding="utf-8"))
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return None
    return None if state[0] in {"Z", "X"} else pid


def environment(
    name: str, settings: dict[str, list[str]], account: pwd.struct_passwd
) -> dict[str, str]:
    """The variables systemd gives the service, then the unit's ``Environment=``."""
    variables = {
        "PATH": PATH, "LANG": "C.UTF-8", "HOME": account.pw_dir, "USER": account.pw_name,
        "LOGNAME": account.pw_name, "SHELL": account.pw_shell,
        "NOTIFY_SOCKET": str(STATE / f"{name}.notify"),
    }  # fmt: skip
    for kind, root in (("Configuration", "/etc"), ("State", "/var/lib")):
        if folder := last(settings, f"{kind}Directory"):
            variables[f"{kind.upper()}_DIRECTORY"] = f"{root}/{folder}"
    if settings.get("LoadCredential"):
        variables["CREDENTIALS_DIRECTORY"] = f"/run/credentials/{name}.service"
    for line in settings.get("Environment", []):
        for word in shlex.split(line):
            key, value = word.split("=", 1)
            variables[key] = value
    return variables


def credentials(settings: dict[str, list[str]], folder: Path, account: pwd.struct_passwd) -> None:
    """``LoadCredential=ID:PATH``: each file copied for the service alone, as systemd does."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, mode=0o700)
    for line in settings.get("LoadCredential", []):
        identifier, source = line.split(":", 1)
        target = folder / identifier
        shutil.copyfile(source, target)
        os.chown(target, account.pw_uid, account.pw_gid)
        target.chmod(0o400)
    os.chown(folder, account.pw_uid, account.pw_gid)
    folder.chmod(0o500)


def start(name: str) -> int:
    if pid_of(name) is not None:
        return 0
    settings = read_unit(name)
    account = pwd.getpwnam(last(settings, "User", "root"))
    group = grp.getgrnam(last(settings, "Group", account.pw_name))
    groups = os.getgrouplist(account.pw_name, group.gr_gid)
    for word in " ".join(settings.get("SupplementaryGroups", [])).split():
        groups.append(grp.getgrnam(word).gr_gid)
    variables = environment(name, settings, account)
    if "CREDENTIALS_DIRECTORY" in variables:
        credentials(settings, Path(variables["CREDENTIALS_DIRECTORY"]), account)
    command = re.sub(r"\$\{(\w+)\}", lambda m: variables[m.group(1)], last(settings, "ExecStart"))
    STATE.mkdir(parents=True, exist_ok=True)
    STATE.chmod(0o755)
    notify_path = Path(variables["NOTIFY_SOCKET"])
    notify_path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(notify_path))
        notify_path.chmod(0o666)  # the service's user sends to it
        with (STATE / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(
                shlex.split(command), env=variables, stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, cwd=last(settings, "WorkingDirectory", "/"), user=account.pw_uid,
                group=group.gr_gid, extra_groups=sorted(set(groups)),
                umask=int(last(settings, "UMask", "0022"), 8), start_new_session=True,
            )  # fmt: skip
        (STATE / f"{name}.pid").write_text(str(process.pid), encoding="utf-8")
        deadline = time.monotonic() + START_S
        notify.settimeout(0.5)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                say(f"Job for {name}.service failed: exit status {process.returncode}; "
                    f"its log:\n{log_tail(name)}", error=True)  # fmt: skip
                return 1
            with contextlib.suppress(TimeoutError):
                message = notify.recv(4096).decode()
                for line in message.splitlines():
                    if line.startswith("STATUS="):
                        (STATE / f"{name}.status").write_text(line[7:], encoding="utf-8")
                if "READY=1" in message.splitlines():
                    return 0
    stop(name)
    say(f"Job for {name}.service failed: no READY=1 within {START_S:g} s", error=True)
    return 1


def log_tail(name: str) -> str:
    path = STATE / f"{name}.log"
    return "\n".join(path.read_text(errors="replace").splitlines()[-20:]) if path.exists() else ""


def stop(name: str) -> int:
    pid = pid_of(name)
    if pid is None:
        return 0
    settings = read_unit(name)
    timeout = float(last(settings, "TimeoutStopSec", "90"))
    how = signal.Signals[last(settings, "KillSignal", "SIGTERM")]
    pidfd = os.pidfd_open(pid)
    try:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, how)
        waiting = select.poll()
        waiting.register(pidfd, select.POLLIN)
        if not waiting.poll(timeout * 1000):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            waiting.poll(10_000)
    finally:
        os.close(pidfd)
    (STATE / f"{name}.pid").unlink(missing_ok=True)
    return 0


def status(name: str) -> int:
    pid = pid_of(name)
    text = STATE / f"{name}.status"
    shown = text.read_text(encoding="utf-8") if text.exists() else ""
    if pid is None:
        say(f"○ {name}.service\n     Active: inactive (dead)")
        return 3
    say(f"● {name}.service\n     Active: active (running)\n   Main PID: {pid}\n"
        f'     Status: "{shown}"')  # fmt: skip
    return 0


def is_active(name: str) -> int:
    running = pid_of(name) is not None
    say("active" if running else "inactive")
    return 0 if running else 3


def say(text: str, *, error: bool = False) -> None:
    """A line for the person at the terminal (stderr for a failure), as systemctl prints."""
    (sys.stderr if error else sys.stdout).write(text + "\n")


def main(argv: list[str]) -> int:
    words = [word for word in argv if not word.startswith("-")]
    if not words:
        say("systemctl stand-in: no command", error=True)
        return 1
    verb, units = words[0], [word.removesuffix(".service") for word in words[1:]]
    if verb == "daemon-reload":
        return 0
    if others := [unit for unit in units if unit not in SERVED]:
        say(f"systemctl stand-in: only {', '.join(SERVED)} runs here, not {others}", error=True)
        return 1
    actions: dict[str, Callable[[str], int]] = {
        "start": start, "stop": stop, "status": status, "is-active": is_active,
        "restart": lambda unit: stop(unit) or start(unit),
        "enable": lambda unit: start(unit) if "--now" in argv else 0,
    }  # fmt: skip
    if verb not in actions:
        say(f"systemctl stand-in: {verb} is not one it does", error=True)
        return 1
    return max((actions[verb](unit) for unit in units), default=0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
