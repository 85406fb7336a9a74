"""What a loaded configuration resolves: secret files checked, paths, defaults and serial ports.

A password or TLS key file open to other users is refused; relative paths are relative to the
configuration's folder; defaults fill a minimal file; a serial table gets its port, and a
port of another table is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.config_files import BASE, edited, error_of, load, write

from controller.config.load import Transport
from drivers.simulator_source import SimulatorSettings

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_password_file_open_to_other_users_is_refused(tmp_path: Path) -> None:
    secret = write(tmp_path, "hunter2\n", "secrets/mqtt-password")
    broker = '[broker]\nusername = "jackpotd"\npassword_file = "secrets/mqtt-password"\n'
    secret.chmod(0o644)
    error = error_of(tmp_path, BASE + broker)
    assert error.key == "broker.password_file"
    assert "open to every user (mode 644); chmod o-rwx it" in error.reason
    secret.chmod(0o640)
    config = load(tmp_path, BASE + broker)
    broker = config.settings("broker")
    assert broker.password_file == str(tmp_path / "secrets" / "mqtt-password")


def test_tls_files_are_checked_and_resolved(tmp_path: Path) -> None:
    for name in ("ca.crt", "c1.crt", "c1.key"):
        write(tmp_path, "-----\n", f"tls/{name}").chmod(0o600)
    tls = '[broker]\nport = 8883\n[broker.tls]\nca_file = "tls/ca.crt"\ncert_file = "tls/c1.crt"\n'
    assert error_of(tmp_path, BASE + tls).key == "broker.tls"
    config = load(tmp_path, BASE + tls + 'key_file = "tls/c1.key"\n')
    broker = config.settings("broker")
    assert broker.tls is not None
    assert broker.tls.ca_file == str(tmp_path / "tls" / "ca.crt")
    (tmp_path / "tls" / "c1.key").chmod(0o604)
    error = error_of(tmp_path, BASE + tls + 'key_file = "tls/c1.key"\n')
    assert error.key == "broker.tls.key_file"


def test_relative_paths_are_relative_to_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "etc"
    monkeypatch.chdir(tmp_path)
    default = load(folder, BASE).controller.journal
    assert default == folder / "var" / "journal.db"
    text = edited('id = "c1"\n', 'id = "c1"\njournal = "data/j.db"\n')
    assert load(folder, text).controller.journal == folder / "data" / "j.db"
    text = edited('id = "c1"\n', f'id = "c1"\njournal = "{tmp_path / "abs.db"}"\n')
    assert load(folder, text).controller.journal == tmp_path / "abs.db"


def test_defaults_fill_a_minimal_file(tmp_path: Path) -> None:
    config = load(tmp_path, BASE)
    table = config.tables[0]
    assert table.transport == Transport("simulator")
    assert table.event.seats == 6
    assert (table.event.minimum_wager_cents, table.event.envy_minimum_cents) == (100, 500)
    assert table.event.envy_includes_dealer is False  # § 688a.1: never the dealer's hand
    assert table.event.max_payout_cents is None
    assert table.heartbeat_timeout_s == 10
    assert config.pools[0].terms.seed_cents == 1_000_000
    assert config.settings("broker") is None
    assert (config.web.host, config.web.port) == ("127.0.0.1", 8080)
    # A simulator table plays with the defaults, as if [simulator] were written empty.
    assert config.settings("simulator") == SimulatorSettings()


def test_a_serial_table_gets_its_port(tmp_path: Path) -> None:
    serial = '[[serial]]\nname = "com1"\nurl = "socket://localhost:7000"\ntable_id = "t1"\n'
    config = load(tmp_path, edited('"simulator"', '"serial:com1"') + serial)
    assert config.tables[0].transport == Transport("serial", "com1")
    assert [entry.key for entry in config.entries("serial")] == ["serial[0]"]
    assert config.settings("simulator") is None


def test_a_serial_port_of_another_table_is_refused(tmp_path: Path) -> None:
    serial = '[[serial]]\nname = "com1"\nurl = "/dev/ttyS0"\ntable_id = "t2"\n'
    error = error_of(tmp_path, edited('"simulator"', '"serial:com1"') + serial)
    assert error.key == "tables[0].transport"
    assert error.reason == "[[serial]] 'com1' is for table 't2' (serial[0].table_id)"
