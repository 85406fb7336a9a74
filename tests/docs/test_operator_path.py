"""docs/operations.md's operator path, run as written: install to restore, on a scratch root.

The page marks the blocks of its operator's path (``<!-- operator-path: STEP [as=ACCOUNT] -->``,
its opening says how; tests/support/deploy/doc_blocks.py reads them). This test runs each, verbatim,
in page order, with ``bash -euo pipefail``, and fails on the first that fails, so that a page
that drifts from the code fails here rather than on a floor:

* on a scratch root (tests/support/deploy/scratch_root.py): a private mount and network namespace
  whose system folders are overlays of the test's, so the blocks write ``/opt/jackpotd``,
  ``/etc/jackpotd``, ``/var/lib/jackpotd`` and ``/etc/passwd`` where the page says and this
  machine is left as it was;
* root's blocks from a clone of the repository (``make install-service`` builds and installs
  it there), the operators' at their own accounts (``dana``, ``lee``, ``sam``: real users made
  here, in the groups the page puts them in) in their tokens' folders ``/media/ACCOUNT``, which
  only they can read: no key file is ever on the controller's disk or readable by the
  service's user;
* the service as the unit says, as its real non-root user ``jackpotd`` (systemd-sysusers made
  it), started by ``systemctl`` (tests/support/deploy/systemctl_standin.py: no systemd here);
* a real mosquitto on TLS, the shipped configuration and ACL on make-secrets.sh's
  credentials (tests/support/drivers/shipped_broker.py), which section 2 installs from
  ``/root/jackpot-secrets``; the table ``t3`` deals section 6's seven-card straight flush to
  seat 2, which wins the meter (the pay section 6 verifies, at or above
  ``dual_control_amount``), with ``mosquitto_pub`` as the lab stack's table does.

What a person does and a block cannot: the passphrases they type (the environment), the
editor (it writes the site's file, then the change), and the broker (section 4, tested by
tests/deploy/). The service is stopped by its process group at the end, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest
from support.deploy.doc_blocks import ROOT_ACCOUNT, Block, marked_blocks
from support.deploy.scratch_root import PATH, ScratchRoot, run_group, scratch_root
from support.deploy.source_tree import ROOT, copy_tree
from support.drivers.mosquitto import MOSQUITTO
from support.drivers.shipped_broker import SHIPPED, Credentials, make_secrets, substitute
from support.ledger.approvals import PASSPHRASE

if TYPE_CHECKING:
    from collections.abc import Iterator

PAGE: Final = ROOT / "docs" / "operations.md"
STEPS: Final = (
    "install", "keys", "enroll", "approve", "first-run", "change", "verify", "backup", "restore",
)  # fmt: skip
OPERATORS: Final = {"dana": "Dana Reyes", "lee": "Lee Chen", "sam": "Sam Okafor"}
CLONE: Final = "/root/paigow-jackpot"
STANDINS: Final = "/run/jackpotd-test-bin"
STANDIN_STATE: Final = "/run/jackpotd-standin"
EDITS: Final = "/root/site-edits"
PAYOUT: Final = "t3/shoe/17/2/progressive"
"""The pay section 6 verifies: seat 2's progressive in the round the shoe's 17th event ends."""
SEAT_2: Final = ("As", "Ks", "Qs", "Js", "Ts", "9s", "8s")  # section 6's: 100% of the meter
DEALER: Final = ("3c", "4d", "6s", "8d", "Tc", "Qc", "7s")
BET: Final = {"device": "bs-1", "seq": 1, "seat": 2, "spot": "progressive", "present": True,
              "amount_cents": 100}  # fmt: skip
WAIT_S: Final = 60.0
SERVICE: Final = "jackpotd"

SITE: Final = """\
[controller]
site = "riverside"
id = "pit-2"
journal = "/var/lib/jackpotd/journal.db"
jurisdiction = "pa"
verification_amount = "$10,000"
dual_control_amount = "$10,000"
heartbeat_timeout_s = 3600
key_file = "${CREDENTIALS_DIRECTORY}/controller-key"
operator_socket = "/run/jackpotd/operator.sock"
operator_group = "jackpotd-operators"
high_water_file = "/var/lib/jackpotd/journal.high-water"
gaming_day_start = "06:00"
time_zone = "America/New_York"

[broker]
host = "127.0.0.1"
port = 8883
username = "jackpotd-in"
password_file = "${CREDENTIALS_DIRECTORY}/mqtt-password-in"
out_username = "jackpotd-out"
out_password_file = "${CREDENTIALS_DIRECTORY}/mqtt-password-out"

[broker.tls]
ca_file = "/etc/jackpotd/tls/ca.crt"
cert_file = "/etc/jackpotd/tls/jackpotd.crt"
key_file = "${CREDENTIALS_DIRECTORY}/broker-tls-key"

[[pools]]
id = "fortune-floor"
paytable = "progressive-1"
seed = "$10,000"
limit = "$250,000"

[[tables]]
id = "t3"
transport = "mqtt"
seats = 6
progressive = "progressive-1"
pool = "fortune-floor"
minimum_wager = "$5"

[web]
host = "127.0.0.1"
port = 8080
"""
CHANGED: Final = SITE.replace('minimum_wager = "$5"', 'minimum_wager = "$10"')
"""Section 3's change of the configuration: one that moves money, so both approvals."""


def test_the_path_is_marked_in_the_order_of_an_installation_with_keys_off_the_controller() -> None:
    blocks = marked_blocks(PAGE)
    assert {block.step for block in blocks} == set(STEPS)
    assert {block.account for block in blocks} == {ROOT_ACCOUNT, *OPERATORS}
    for block in blocks:
        assert "sudo" not in block.text, block.where()  # not on a Debian host by default
        keys = re.findall(r"--key (\S+)", block.text)
        if block.account == ROOT_ACCOUNT:  # only while the service is stopped, from a token
            assert all(key.startswith("/media/") for key in keys), block.where()
            assert not keys or "--direct" in block.text, block.where()
        else:  # at the operator's own account, from their token's folder
            assert all("/" not in key for key in keys), block.where()
            assert "--direct" not in block.text, block.where()
        assert not ("runuser" in block.text and keys), block.where()  # never the service's user


@pytest.mark.slow
def test_the_operator_path_of_operations_md_runs_as_written(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the operator path runs as root (useradd, mount namespaces)")
    prepare(tmp_path)
    with scratch_root(tmp_path) as root, broker(root, tmp_path), service_stopped(root):
        accounts(root)
        for block in path():
            if block.step == "verify" and not pending(root):
                play_the_jackpot(root, Credentials(tmp_path / "secrets"))
            done = run(root, block)
            assert done.returncode == 0, failure(block, done)
            if block.step == "first-run":
                assert_serving_as_the_service_user(root)
                assert_the_login_secrets_are_the_services_alone(root, tmp_path / "secrets")
        assert_verified_at_the_operators_accounts(root)


def path() -> list[Block]:
    """The marked blocks step by step in :data:`STEPS`' order, each step's in page order."""
    return sorted(marked_blocks(PAGE), key=lambda block: STEPS.index(block.step))


# The scratch root's contents, placed before it is entered.


def prepare(folder: Path) -> None:
    """The clone, the broker's secrets, the stand-ins and the editor's files, under the overlays."""
    upper = folder / "upper"
    copy_tree(upper / CLONE.lstrip("/"))
    made = make_secrets(folder / "secrets", "t3")
    assert made.returncode == 0, made.stderr
    shutil.copytree(folder / "secrets", upper / "root" / "jackpot-secrets")
    bin_folder = upper / STANDINS.lstrip("/")
    bin_folder.mkdir(parents=True)
    # Inside, where the namespace can read it: this tree may itself be under /tmp, which is
    # empty in there.
    shutil.copy(
        ROOT / "tests" / "support" / "deploy" / "systemctl_standin.py", bin_folder / "standin.py"
    )
    standin = f"{STANDINS}/standin.py"
    scripts = {
        "systemctl": f'#!/bin/sh\nexec /usr/bin/python3 -I {standin} "$@"\n',
        # The person at the editor: the next version of the site's file, over the one named.
        "editor": f'#!/bin/sh\nset -e\nnext=$(ls {EDITS} | head -n 1)\ncat "{EDITS}/$next" >"$1"\n'
        f'rm "{EDITS}/$next"\n',
    }
    for name, text in scripts.items():
        (bin_folder / name).write_text(text, encoding="utf-8")
        (bin_folder / name).chmod(0o755)
    edits = upper / EDITS.lstrip("/")
    edits.mkdir(parents=True)
    (edits / "1-site.toml").write_text(SITE, encoding="utf-8")
    (edits / "2-change.toml").write_text(CHANGED, encoding="utf-8")


def accounts(root: ScratchRoot) -> None:
    """The operators' own accounts and their tokens' folders (idempotent: made if absent)."""
    for account in OPERATORS:
        root.root(
            f"id -u {account} >/dev/null 2>&1 || useradd --create-home --user-group "
            f"--shell /bin/bash {account}\ninstall -d -o {account} -g {account} -m 0700 "
            f"/media/{account}"
        )


def environment(account: str) -> dict[str, str]:
    """An operator's or root's login shell, with what the person types, and the pip index."""
    home = "/root" if account == ROOT_ACCOUNT else f"/home/{account}"
    kept = {name: value for name, value in os.environ.items() if name.startswith("PIP_")}
    return kept | {
        "PATH": f"{STANDINS}:{PATH}", "HOME": home, "USER": account, "LOGNAME": account,
        "LANG": "C.UTF-8", "JACKPOTD_PASSPHRASE": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_1": PASSPHRASE, "JACKPOTD_PASSPHRASE_2": PASSPHRASE,
        "JACKPOTD_NEW_PASSPHRASE": PASSPHRASE, "JACKPOTD_STANDIN_STATE": STANDIN_STATE,
    }  # fmt: skip


def run(root: ScratchRoot, block: Block) -> subprocess.CompletedProcess[str]:
    cwd = CLONE if block.account == ROOT_ACCOUNT else f"/media/{block.account}"
    # The installation reaches the package index (pip); every other step, the private loopback.
    return root.bash(block.text, account=block.account, cwd=cwd,
                     environment=environment(block.account),
                     host_network=block.step == "install")  # fmt: skip


def failure(block: Block, done: subprocess.CompletedProcess[str]) -> str:
    return (f"docs/operations.md {block.where()} failed ({done.returncode}):\n{block.text}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}")  # fmt: skip


# The broker and the table.


@contextlib.contextmanager
def broker(root: ScratchRoot, folder: Path) -> Iterator[None]:
    """The shipped mosquitto, on TLS at 127.0.0.1:8883 of the namespace, until the block ends."""
    secrets, here = folder / "secrets", folder / "broker"
    here.mkdir()
    config = here / "mosquitto.conf"
    config.write_text(substitute((SHIPPED / "mosquitto.conf").read_text(encoding="utf-8"), {
        "listener": "8883 127.0.0.1", "cafile": str(secrets / "ca.crt"),
        "certfile": str(secrets / "broker" / "server.crt"),
        "keyfile": str(secrets / "broker" / "server.key"),
        "password_file": str(secrets / "broker" / "passwd"), "acl_file": str(SHIPPED / "acl"),
        "persistence_location": f"{here}/", "user": "root",
    }), encoding="utf-8")  # fmt: skip
    log = here / "mosquitto.log"
    with log.open("wb") as out:
        process = subprocess.Popen([*root.enter(network_only=True), MOSQUITTO, "-c", str(config)],
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=out)  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while "Opening ipv4 listen socket on port 8883" not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.05)  # nothing says when it listens but its log
        yield
    finally:
        process.terminate()
        process.wait(timeout=WAIT_S)


def play_the_jackpot(root: ScratchRoot, credentials: Credentials) -> None:
    """Table t3 plays round r-0042: seat 2's progressive wager, won by a 7-card straight flush."""
    topic = "riverside/jackpot/v1/table/t3"
    cert, key = credentials.cert("t3")
    tls = [
        "-h", "127.0.0.1", "-p", "8883", "--cafile", str(credentials.directory / "ca.crt"),
        "--cert", str(cert), "--key", str(key), "-u", "t3", "-P", credentials.password("t3"),
        "-i", "table-t3", "-q", "1",
    ]  # fmt: skip
    messages: list[tuple[str, dict[str, object]]] = [
        ("heartbeat", {"device": "shoe", "seq": 1}),
        ("bet", BET),
        ("lock", {"device": "shoe", "seq": 2, "round": "r-0042"}),
    ]
    seq = 3
    for position, cards in ((0, DEALER), (2, SEAT_2)):
        for card in cards:
            messages.append(("card", {"device": "shoe", "seq": seq, "round": "r-0042",
                                      "position": position, "card": card}))  # fmt: skip
            seq += 1
    messages.append(("done", {"device": "shoe", "seq": seq, "round": "r-0042"}))
    publish = ["mosquitto_pub", *tls]
    sent = [[*publish, "-r", "-t", f"{topic}/status", "-m", "online"]] + [
        [*publish, "-t", f"{topic}/event/{kind}", "-m", json.dumps({"v": 1, **fields})]
        for kind, fields in messages
    ]
    for command in sent:
        done = run_group([*root.enter(network_only=True), *command], {"PATH": PATH}, WAIT_S)
        assert done.returncode == 0, (command, done.stderr)
    deadline = time.monotonic() + WAIT_S
    while not pending(root):
        assert time.monotonic() < deadline, f"{PAYOUT} never pending:\n{what_was_journaled(root)}"
        time.sleep(0.2)  # the journal says when; the daemon tells nobody outside it


def what_was_journaled(root: ScratchRoot) -> str:
    """The pays, the last rows and the service's log, for a failure's message."""
    pays = root.bash("jackpotd hits --kind all; jackpotd meters", environment=environment("root"))
    query = "SELECT seq, event_id, kind, reason FROM journal ORDER BY seq DESC LIMIT 25"
    last = root.bash(f'sqlite3 -readonly /var/lib/jackpotd/journal.db "{query}"',
                     environment=environment("root"))  # fmt: skip
    log = root.upper(f"{STANDIN_STATE}/jackpotd.log")
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    return f"{pays.stdout}{pays.stderr}\n{last.stdout[-6000:]}{last.stderr}\n{tail}"


def pending(root: ScratchRoot) -> bool:
    """Whether the jackpot the page verifies is pending (root, reading the journal)."""
    done = root.bash("jackpotd hits --pending --json", environment=environment(ROOT_ACCOUNT))
    return done.returncode == 0 and PAYOUT in done.stdout


# What the path must have done.


def service_pid(root: ScratchRoot) -> int | None:
    path = root.upper(f"{STANDIN_STATE}/jackpotd.pid")
    return int(path.read_text(encoding="utf-8")) if path.exists() else None


def assert_serving_as_the_service_user(root: ScratchRoot) -> None:
    """The daemon runs as ``jackpotd``, not root; its socket is 0660 in the operators' group."""
    pid = service_pid(root)
    assert pid is not None
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = re.search(r"^Uid:(.*)$", status, re.MULTILINE)
    assert found is not None, status
    uids = {int(word) for word in found.group(1).split()}  # real, effective, saved, file system
    ids = root.root("id -u jackpotd; getent group jackpotd-operators | cut -d: -f3").split()
    assert uids == {int(ids[0])}
    sock = root.upper("/run/jackpotd/operator.sock").stat()
    assert (oct(sock.st_mode & 0o777), sock.st_gid) == ("0o660", int(ids[1]))


LOGIN_SECRETS: Final = {  # the service's credential: what make-secrets.sh wrote it from
    "mqtt-password-in": "passwords/jackpotd-in",
    "mqtt-password-out": "passwords/jackpotd-out",
    "broker-tls-key": "clients/jackpotd.key",
}
GROUP_READABLE: Final = "/etc/jackpotd /etc/credstore /run/credentials /var/lib/jackpotd /run"
"""Where the jackpotd group reads, and where the secrets are kept and handed over."""


def assert_the_login_secrets_are_the_services_alone(root: ScratchRoot, secrets: Path) -> None:
    """The broker passwords and the client key are the service's, not the jackpotd group's.

    Sam is in that group (the auditors', as the page puts her): she reads none of them, in root's
    store or in what systemd hands the service, nor a line of one anywhere under those folders;
    the service, which logged in with them, is given each (0400, its own).
    """
    assert "sam" in root.root("getent group jackpotd")
    given = f"/run/credentials/{SERVICE}.service"
    for credential, source in LOGIN_SECRETS.items():
        text = (secrets / source).read_text(encoding="utf-8")
        assert root.root(f"runuser -u jackpotd -- cat {given}/{credential}") == text
        kept = f"/etc/credstore/jackpotd-{credential}"
        modes = root.root(f"stat -c '%a %U' {given}/{credential} {kept}").splitlines()
        assert modes == ["400 jackpotd", "600 root"], modes
        for path in (f"{given}/{credential}", kept):
            done = root.bash(f"cat {path}", account="sam", environment={"PATH": PATH})
            assert done.returncode != 0, f"sam read {path}"
        needles = " ".join(f"-e '{line}'" for line in text.splitlines() if "-----" not in line)
        found = root.bash(
            f"grep -rlsF -D skip {needles} {GROUP_READABLE} || true", account="sam",
            environment={"PATH": PATH},
        )  # fmt: skip
        assert found.stdout == "", f"sam reads {credential} in {found.stdout}"


def assert_verified_at_the_operators_accounts(root: ScratchRoot) -> None:
    """The restored journal holds the verification, journaled through the socket as Lee."""
    lee = root.root("id -u lee").strip()
    provenances = root.root(
        'sqlite3 -readonly /var/lib/jackpotd/journal.db "SELECT provenance FROM journal"'
    ).splitlines()
    assert f"operator-socket uid={lee} command=cosign" in provenances, provenances


@contextlib.contextmanager
def service_stopped(root: ScratchRoot) -> Iterator[None]:
    """Whatever happens, the service's process group is stopped (SIGTERM, then SIGKILL)."""
    try:
        yield
    finally:
        pid = service_pid(root)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError), closing_pidfd(pid) as pidfd:
                os.killpg(pid, signal.SIGTERM)
                waiting = select.poll()
                waiting.register(pidfd, select.POLLIN)
                if not waiting.poll(30_000):
                    os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def closing_pidfd(pid: int) -> Iterator[int]:
    pidfd = os.pidfd_open(pid)
    try:
        yield pidfd
    finally:
        os.close(pidfd)
