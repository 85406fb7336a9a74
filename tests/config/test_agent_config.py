"""A table agent's configuration file: typed, checked, every error naming file, key and reason."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.config.agent import load_agent_config, parse_agent_config
from controller.config.schema import ConfigError
from drivers.mqtt.settings import BrokerSettings
from drivers.serial.settings import SerialPortSettings

if TYPE_CHECKING:
    from controller.agent.settings import AgentConfig

VALID = """
[agent]
table_id = "t1"
outbox = "state/agent.db"
site = "riverside"
closed_after_s = 6
heartbeat_s = 2
state_file = "table-state.json"

[broker]
host = "10.0.0.2"
username = "t1"

[[serial]]
name = "sensors"
url = "/dev/ttyUSB0"

[[serial]]
name = "shoe"
url = "/dev/ttyUSB1"
table_id = "t1"
"""


def parse(text: str, tmp_path: Path) -> AgentConfig:
    return parse_agent_config(text.encode(), "agent.toml", tmp_path)


def test_a_valid_file_gives_the_drivers_own_settings_bound_to_the_table(tmp_path: Path) -> None:
    config = parse_agent_config(VALID.encode(), "agent.toml", tmp_path)
    assert config.table_id == "t1"
    assert config.outbox == tmp_path / "state/agent.db"  # relative to the file's folder
    assert config.state_file == tmp_path / "table-state.json"
    assert (config.closed_after_s, config.heartbeat_s) == (6, 2)
    assert (config.resend_initial_s, config.resend_cap_s) == (0.5, 10.0)
    broker = config.broker
    assert isinstance(broker, BrokerSettings)
    assert (broker.host, broker.site, broker.username) == ("10.0.0.2", "riverside", "t1")
    assert broker.client_id == "table-t1"  # the table's session, named as its user would be
    assert all(isinstance(line, SerialPortSettings) for line in config.serial)
    assert [(line.name, line.table_id) for line in config.serial] == [  # type: ignore[attr-defined]
        ("sensors", "t1"),
        ("shoe", "t1"),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("closed_after_s = 6", "closed_after_s = 3"), "agent.toml: agent.closed_after_s: is"),
        (("heartbeat_s = 2", "heartbeat_s = 0"), "agent.toml: agent.heartbeat_s: must be above 0"),
        (('table_id = "t1"\noutbox', 'table_id = "t/1"\noutbox'), "agent.toml: agent.table_id:"),
        (('site = "riverside"', 'site = "riverside"\ncolour = "red"'), "agent.toml: agent.colour:"),
        (
            ('url = "/dev/ttyUSB1"\ntable_id = "t1"', 'url = "/dev/ttyUSB1"\ntable_id = "t2"'),
            "agent.toml: serial[1].table_id: is 't2'",
        ),
        (('host = "10.0.0.2"', 'host = "10.0.0.2"\nport = 0'), "agent.toml: broker.port:"),
        (('name = "shoe"', 'name = "sensors"'), "agent.toml: serial[1].name:"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in VALID
    with pytest.raises(ConfigError) as raised:
        parse(VALID.replace(old, new, 1), tmp_path)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_the_broker_and_a_serial_line_are_required(tmp_path: Path) -> None:
    without_broker = VALID.replace('[broker]\nhost = "10.0.0.2"\nusername = "t1"\n', "")
    with pytest.raises(ConfigError, match=r"^agent.toml: broker: write a \[broker\] table"):
        parse(without_broker, tmp_path)
    without_lines = VALID[: VALID.index("[[serial]]")]
    with pytest.raises(ConfigError, match=r"^agent.toml: serial: write one \[\[serial\]\]"):
        parse(without_lines, tmp_path)


def test_a_file_that_is_not_toml_or_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^agent.toml: \(file\): not valid TOML"):
        parse("[agent", tmp_path)
    with pytest.raises(ConfigError, match=r"missing.toml: \(file\): cannot read"):
        load_agent_config(tmp_path / "missing.toml")


def test_the_shipped_sample_is_valid() -> None:
    sample = Path(__file__).resolve().parents[2] / "deploy" / "agent.toml"
    config = parse_agent_config(sample.read_bytes(), str(sample), sample.parent)
    assert config.table_id == "t1"
    assert isinstance(config.broker, BrokerSettings)
    assert (config.broker.username, config.broker.client_id) == ("t1", "table-t1")
    assert [line.name for line in config.serial] == ["sensors", "shoe"]  # type: ignore[attr-defined]
