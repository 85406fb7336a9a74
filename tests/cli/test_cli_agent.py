"""``jackpotd agent``: a bad configuration or outbox is one line and exit status 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.cli_runs import run

from controller.journal.agent_outbox import AgentOutboxStore

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

GOOD = """
[agent]
table_id = "t1"
outbox = "agent.db"

[broker]
host = "127.0.0.1"

[[serial]]
name = "sensors"
url = "/dev/null"
"""


def test_a_missing_configuration_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "agent", "--config", str(tmp_path / "agent.toml"))
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1
    assert "agent.toml: (file): cannot read" in err


def test_a_bad_key_names_the_file_and_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(GOOD.replace('outbox = "agent.db"', 'outbox = "agent.db"\nclosed = 3'))
    status, _, err = run(capsys, "agent", "--config", str(path))
    assert status == 1
    assert f"{path}: agent.closed: " in err


def test_an_outbox_of_another_table_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    AgentOutboxStore(tmp_path / "agent.db", "t9").close()
    path = tmp_path / "agent.toml"
    path.write_text(GOOD)
    status, _, err = run(capsys, "agent", "--config", str(path))
    assert status == 1
    assert "belongs to table 't9', not 't1'" in err
    assert err.count("\n") == 1
