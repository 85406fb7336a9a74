"""Log lines that input cannot forge: the escaping and the daemon's log handler.

docs/faults.md, "Forged log lines". ``tests/faults/test_fault_forged_log_lines.py`` proves it on the
real daemon; here each character class is escaped on its own, and the handler the command line
installs (:func:`controller.runtime.logsafe.log_handler`) keeps every record on one line, a
traceback's lines indented, whatever the message and the exception say.
"""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.runtime.logsafe import CONTINUATION, escape_control, log_handler

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
FORGED = "\n2026-01-01 00:00:00,000 CRITICAL controller.journal: journal tampered"
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.]+: ")


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("line\nfeed", "line\\nfeed"),
        ("carriage\rreturn", "carriage\\rreturn"),
        ("a\ttab", "a\\ttab"),
        ("\x1b[2Jcleared", "\\x1b[2Jcleared"),
        ("nul\x00byte", "nul\\x00byte"),
        ("bell\x07del\x7f", "bell\\x07del\\x7f"),
        ("next\x85line csi\x9b", "next\\x85line csi\\x9b"),
        ("line\u2028separator\u2029paragraph", "line\\u2028separator\\u2029paragraph"),
        ("\u202eevil\u202c", "\\u202eevil\\u202c"),
        ("\u202a\u202b\u202d", "\\u202a\\u202b\\u202d"),
        ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
    ],
)
def test_each_control_character_is_written_out(raw: str, escaped: str) -> None:
    assert escape_control(raw) == escaped


def test_printable_text_is_left_as_it_is() -> None:
    text = "table t1: rejected (bad-json) b'{\"v\":1}' é ü 中文 €5 \\n already escaped"
    assert escape_control(text) == text


@given(st.text())
def test_escaped_text_holds_no_control_character_and_is_one_line(text: str) -> None:
    escaped = escape_control(text)
    assert len(escaped.splitlines()) <= 1
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", escaped)


def logged(emit: Callable[[logging.Logger], None]) -> str:
    """What the daemon's handler writes for the records ``emit`` logs."""
    stream = io.StringIO()
    logger = logging.getLogger(f"test.logsafe.{id(stream)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(log_handler(stream))
    emit(logger)
    return stream.getvalue()


def test_a_message_quoting_input_stays_one_record_line() -> None:
    text = logged(lambda log: log.info("mqtt: rejected %s (bad-json): %s", "t1" + FORGED, FORGED))
    lines = text.splitlines()
    assert len(lines) == 1
    assert RECORD.match(lines[0])
    assert " INFO test.logsafe." in lines[0]
    assert lines[0].count("\\n2026-01-01 00:00:00,000 CRITICAL") == 2


def test_a_traceback_keeps_its_lines_indented_and_its_message_cannot_start_a_record() -> None:
    def decode() -> None:
        raise ValueError("bad frame" + FORGED)

    def fail(log: logging.Logger) -> None:
        try:
            decode()
        except ValueError:
            log.exception("serial: the intake failed on %s", "t2\r\x1b[2J")

    lines = logged(fail).splitlines()
    assert RECORD.match(lines[0])
    assert lines[0].endswith("serial: the intake failed on t2\\r\\x1b[2J")
    assert len(lines) > 3
    assert all(line.startswith(CONTINUATION) for line in lines[1:])
    assert lines[1] == CONTINUATION + "Traceback (most recent call last):"
    assert lines[-2] == CONTINUATION + "ValueError: bad frame"
    assert lines[-1] == CONTINUATION + FORGED.strip("\n")  # indented: not a record of its own


def test_a_stack_is_indented_too() -> None:
    lines = logged(lambda log: log.warning("here %s", "\u2028", stack_info=True)).splitlines()
    assert lines[0].endswith("here \\u2028")
    assert lines[1] == CONTINUATION + "Stack (most recent call last):"
    assert all(line.startswith(CONTINUATION) for line in lines[1:])


def test_the_command_line_logs_through_the_escaping_handler() -> None:
    # In a child process: the set-up `jackpotd run` and `jackpotd demo` make first, on a root
    # logger without pytest's handlers.
    script = (
        "import logging, sys\n"
        "from controller.cli import run\n"
        "run._logging('info')\n"
        "logging.getLogger('drivers.mqtt.source').info('mqtt: rejected %s', sys.argv[1])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "t1" + FORGED],
        capture_output=True, text=True, check=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert RECORD.match(lines[0])
    assert " INFO drivers.mqtt.source: mqtt: rejected t1\\n2026-01-01" in lines[0]
