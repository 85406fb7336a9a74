"""How ``jackpotd`` ends: its exit statuses, and one line instead of a traceback.

* 0: done; 1: bad input or a refusal (one line ``jackpotd: ...`` on stderr); 2: a usage error
  (argparse's message); 70 (EX_SOFTWARE): a bug, said in one line with a hint, its traceback
  only under ``--debug`` or in the service's log; 130: interrupted; 141 (128 + SIGPIPE): the
  reader of its output went away (``jackpotd hits | head``), quietly, as other Unix tools end.
* 75 (EX_TEMPFAIL): another controller node holds the sequencer (docs/ha.md), so that a
  supervisor tells a node refused the fence from a bad configuration. (74, a hung commit, and
  75 at a commit later are the service's own: tests/runtime/test_sequencer_fence.py.)
* The demo and the service say in one line that the display's port is taken or its host
  unknown, before anything starts.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from support.cli.cli_runs import run
from support.deploy.software_rig import write_config

from controller.cli import paytables
from controller.config.load import load_config
from controller.journal.errors import FencedError

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


def jackpotd(
    *argv: str, cwd: Path, stdout: int = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True,
        timeout=WAIT_S, check=False, cwd=cwd, env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def listening(host: str) -> socket.socket:
    """A socket listening on a free port of ``host``: the port is taken."""
    taken = socket.socket()
    taken.bind((host, 0))
    taken.listen()
    return taken


def a_bug() -> None:
    raise ZeroDivisionError("division by zero")


def test_a_reader_that_goes_away_ends_the_command_quietly(played: Path, tmp_path: Path) -> None:
    for argv in (("paytables",), ("hits", "--db", str(played))):
        reading, writing = os.pipe()
        os.close(reading)  # as `| head` does once it has read its lines
        try:
            done = jackpotd(*argv, cwd=tmp_path, stdout=writing)
        finally:
            os.close(writing)
        assert (done.returncode, done.stderr) == (141, ""), argv


def test_a_bug_is_exit_70_in_one_line_with_a_hint(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No bug can be written on purpose into the real code: one is put in its place.
    monkeypatch.setattr(paytables, "seed_paytables", a_bug)
    status, out, err = run(capsys, "paytables")
    assert status == 70
    assert out == ""
    first, hint = err.splitlines()
    assert first == "jackpotd: internal error: ZeroDivisionError: division by zero"
    assert hint.startswith("jackpotd: this is a bug")
    assert "--debug" in hint
    assert "Traceback" not in err


def test_debug_shows_the_traceback_of_a_bug(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(paytables, "seed_paytables", a_bug)
    status, _, err = run(capsys, "--debug", "paytables")
    assert status == 70
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-2] == "jackpotd: internal error: ZeroDivisionError: division by zero"


def test_a_node_refused_the_sequencer_is_exit_75_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fenced() -> None:
        raise FencedError("node b holds the sequencer's fence at epoch 4 (lease live)")

    monkeypatch.setattr(paytables, "seed_paytables", fenced)
    assert run(capsys, "paytables") == (
        75,
        "",
        "jackpotd: node b holds the sequencer's fence at epoch 4 (lease live)\n",
    )


def test_an_interrupt_is_exit_130_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(paytables, "seed_paytables", interrupted)
    assert run(capsys, "paytables") == (130, "", "jackpotd: interrupted\n")


def test_the_demo_says_its_port_is_taken(tmp_path: Path) -> None:
    with closing(listening("127.0.0.1")) as taken:
        port = taken.getsockname()[1]
        done = jackpotd(
            "demo", "--rounds", "1", "--port", str(port), "--db", str(tmp_path / "demo.db"),
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == (
        f"jackpotd: the display cannot listen on 127.0.0.1:{port}: the port is in use "
        "(another jackpotd, or another program; choose another with --port)\n"
    )
    assert not (tmp_path / "demo.db").exists()


def test_the_demo_says_its_host_is_unknown(tmp_path: Path) -> None:
    done = jackpotd(
        "demo", "--rounds", "1", "--host", "no-such-host.invalid", "--db",
        str(tmp_path / "demo.db"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("jackpotd: the display cannot listen on no-such-host.invalid:8080: ")
    assert "unknown host" in line
    assert not (tmp_path / "demo.db").exists()


def test_the_service_says_its_port_is_taken(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    web = load_config(config).web
    with closing(socket.socket()) as taken:
        taken.bind((web.host, web.port))
        taken.listen()
        done = jackpotd("run", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"jackpotd: the display cannot listen on {web.host}:{web.port}: the port is in use "
        f"(another jackpotd, or another program; choose another with [web] port in {config})"
    )
    assert "Traceback" not in done.stderr


def test_a_bad_log_level_is_a_usage_error_naming_the_levels(tmp_path: Path) -> None:
    for argv in (("run", "--config", "x.toml"), ("demo",)):
        done = jackpotd(*argv, "--log-level", "LOUD", cwd=tmp_path)
        assert done.returncode == 2
        assert "argument --log-level: invalid choice: 'LOUD'" in done.stderr
        assert "'DEBUG', 'INFO', 'WARNING', 'ERROR'" in done.stderr


def test_apply_of_a_missing_file_names_it(tmp_path: Path) -> None:
    done = jackpotd("apply", "events.jsonl", "--db", str(tmp_path / "j.db"), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        1,
        "jackpotd: events.jsonl: cannot read: No such file or directory\n",
    )
    assert not (tmp_path / "j.db").exists()


def test_a_journal_in_a_folder_that_cannot_exist_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a file, not a folder\n")
    feed = tmp_path / "events.jsonl"
    feed.write_text("")
    done = jackpotd("apply", str(feed), "--db", str(tmp_path / "plain" / "j.db"), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        1,
        (
            f"jackpotd: {tmp_path / 'plain' / 'j.db'}: cannot create the journal: "
            f"{tmp_path / 'plain'} is not a folder\n"
        ),
    )


def test_a_refusal_quoting_terminal_controls_reaches_the_terminal_inert(tmp_path: Path) -> None:
    """docs/security.md, "Identifiers are one line of text": a message quotes what it refused.

    A path (or an id, or a key file's owner) carrying a terminal's escape sequence is said with
    each control character escaped, so the operator's terminal is not retitled or cleared; the
    message keeps its one line.
    """
    retitle, clear = "\x1b]0;pwned\x07", "\x1b[2J"
    for argv in (
        ("meters", "--db", str(tmp_path / f"gone{retitle}" / "journal.db")),
        ("config", "check", str(tmp_path / f"jackpotd{clear}.toml")),
    ):
        done = jackpotd(*argv, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert not {"\x1b", "\x07"} & set(done.stderr), argv
        assert "\\x1b" in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
