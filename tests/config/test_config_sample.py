"""The sample configuration (deploy/jackpotd.toml) and ``jackpotd config check``.

The sample loads with every section and documents every key; the command summarizes a valid
file, prints the one-line error of an invalid one and exits 1, and says either as JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import check
from support.config_files import edited, write

from controller.config import load as config_module
from controller.config import schema as config_schema
from controller.config import wide_area
from controller.config.load import Jurisdiction, load_config
from controller.rules.ranking import AceFive
from drivers.mqtt.settings import BrokerSettings, TlsSettings
from drivers.serial.settings import SerialPortSettings
from drivers.simulator_source import SimulatorSettings

if TYPE_CHECKING:
    import msgspec


SAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "jackpotd.toml"


# -- the sample ----------------------------------------------------------------------------------


def test_the_sample_configuration_loads_with_every_section() -> None:
    config = load_config(SAMPLE)
    assert config.controller.site == "riverside"
    assert config.controller.jurisdiction is Jurisdiction.PA
    assert config.controller.ace_five is AceFive.SECOND_HIGHEST
    assert config.controller.verification_cents == 1_000_000
    assert [pool.pool_id for pool in config.pools] == ["fortune-floor"]
    assert [str(table.transport) for table in config.tables] == [
        "mqtt",
        "serial:t2-devices",
        "simulator",
    ]
    assert config.tables[2].event.ace_high == "ace-high-1"
    broker = config.settings("broker")
    assert isinstance(broker, BrokerSettings)
    assert broker.client_id == "jackpotd-pit-2"
    assert broker.site == "riverside"
    assert [entry.settings.table_id for entry in config.entries("serial")] == ["t2"]
    assert isinstance(config.settings("simulator"), SimulatorSettings)


def _documented(text: str) -> set[str]:
    """Every key the sample sets or shows commented out, as ``section.key``."""
    keys, section = set(), ""
    for line in text.splitlines():
        if header := re.match(r"^#?\s*\[\[?([\w.]+)\]\]?\s*$", line):
            section = header.group(1)
            keys.add(section)  # a sub-table documents its parent's key: [broker.tls]
        elif setting := re.match(r"^#?\s*(\w+)\s*=", line):
            keys.add(f"{section}.{setting.group(1)}")
    return keys


@pytest.mark.parametrize(
    ("section", "struct"),
    [
        ("controller", config_schema.RawController),
        ("broker", BrokerSettings),
        ("broker.tls", TlsSettings),
        ("serial", SerialPortSettings),
        ("pools", config_schema.RawPool),
        ("tables", config_schema.RawTable),
        ("web", config_module.WebSettings),
        ("simulator", SimulatorSettings),
        ("wide_area", wide_area.RawWideArea),
        ("wide_area.sites", wide_area.RawSite),
    ],
)
def test_the_sample_documents_every_key(section: str, struct: type[msgspec.Struct]) -> None:
    documented = _documented(SAMPLE.read_text(encoding="utf-8"))
    set_elsewhere = {"site", "controller_id"} if section == "broker" else set()
    expected = set(struct.__struct_encode_fields__) - set_elsewhere
    missing = {key for key in expected if f"{section}.{key}" not in documented}
    assert not missing


# -- jackpotd config check ------------------------------------------------------------------------


def test_config_check_summarizes_a_valid_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = check(capsys, str(SAMPLE))
    assert (status, err) == (0, "")
    for text in (
        "valid (sha256 ",
        "controller pit-2 at site riverside",
        "fortune-floor: progressive-1, seed $10,000.00, progression 28%",
        "t1: 6 seats over mqtt; bonus fortune-1; progressive progressive-1 -> pool fortune-floor",
        "t2: 6 seats over serial:t2-devices",
        "t3: 6 seats over simulator; ace high ace-high-1",
        "broker (mqtt): 127.0.0.1:1883, no TLS, anonymous, client id jackpotd-pit-2",
        "serial[0] (serial): /dev/ttyUSB0 at 115200 baud -> table t2",
        "alpha_sign: none",
        "web: http://127.0.0.1:8080/",
    ):
        assert text in out


def test_config_check_prints_the_one_line_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, edited('pool = "main"', 'pool = "side"'))
    status, out, err = check(capsys, str(path))
    assert (status, out) == (1, "")
    assert err == f"jackpotd: {path}: tables[0].pool: no pool 'side'; configured: main\n"


def test_config_check_json_either_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = check(capsys, str(SAMPLE), "--json")
    document = json.loads(out)
    assert status == 0
    assert document["valid"] is True
    assert [table["transport"] for table in document["tables"]] == [
        "mqtt",
        "serial:t2-devices",
        "simulator",
    ]
    assert document["pools"][0]["seed_cents"] == 1_000_000
    path = write(tmp_path, edited('pool = "main"', 'pool = "side"'))
    status, out, _ = check(capsys, str(path), "--json")
    assert status == 1
    assert json.loads(out) == {
        "valid": False,
        "file": str(path),
        "key": "tables[0].pool",
        "reason": "no pool 'side'; configured: main",
    }
