"""The secrets a service logs in with are systemd credentials, never files the auditors read.

``/etc/jackpotd`` is readable by the ``jackpotd`` group (the auditors and the operators), so
the broker passwords and the client certificate's private key of the controller, a sign
station and a table agent are root's alone in ``/etc/credstore`` (0600) and reach their service
through ``LoadCredential=`` into ``$CREDENTIALS_DIRECTORY``, as the controller key does
(docs/operations.md, "Configure"; docs/security.md). Here: every secret the shipped
configurations name comes from a credential their unit loads from root's store, and the
configuration expands ``${CREDENTIALS_DIRECTORY}`` where systemd sets it, checks the file
handed over as every secret is checked, and leaves the path unchecked at a shell (a manager's
``config approve``, ``config check`` as the service's user), where nobody reads it.
tests/docs/test_operator_path.py runs the page's own installation and checks, on the running
service, that an operator in the ``jackpotd`` group reads none of them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest
from support.ha.ha_lab import NODES

from controller.config.load import ConfigError, load_config

ROOT: Final = Path(__file__).resolve().parents[2]
SHIPPED: Final = {  # each configuration the units read, and its unit
    "jackpotd.toml": "jackpotd.service",
    "sign.toml": "jackpotd-sign.service",
    "agent.toml": "jackpotd-agent.service",
    **{f"ha/production/{node}/jackpotd.toml": "jackpotd.service" for node in NODES},
}
SECRET_KEYS: Final = re.compile(r"^#? ?(password_file|out_password_file|key_file) = \"([^\"]+)\"")
CREDENTIAL: Final = "${CREDENTIALS_DIRECTORY}/"

CONFIG: Final = """\
[controller]
site = "lab"
id = "c1"

[broker]
username = "jackpotd-in"
password_file = "${CREDENTIALS_DIRECTORY}/mqtt-password-in"

[[pools]]
id = "main"
paytable = "progressive-1"

[[tables]]
id = "t1"
transport = "mqtt"
bonus = "fortune-1"
progressive = "progressive-1"
pool = "main"
"""


def loaded_credentials(unit: str) -> dict[str, str]:
    """The unit's ``LoadCredential=ID:PATH`` lines, by id."""
    text = (ROOT / "systemd" / unit).read_text(encoding="utf-8")
    return dict(re.findall(r"^LoadCredential=([\w-]+):(\S+)$", text, re.MULTILINE))


def broker_secrets(toml: str) -> list[tuple[str, str]]:
    """The broker login's secrets a shipped configuration names, commented out or not."""
    found = []
    section = ""
    for line in (ROOT / "deploy" / toml).read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"^#? ?\[([\w.]+)\]", line):
            section = heading.group(1)
        if section.endswith(("broker", "broker.tls")) and (match := SECRET_KEYS.match(line)):
            found.append((f"{section}.{match.group(1)}", match.group(2)))
    return found


@pytest.mark.parametrize(("toml", "unit"), SHIPPED.items())
def test_every_broker_secret_a_shipped_configuration_names_is_a_credential_from_roots_store(
    toml: str, unit: str
) -> None:
    secrets = broker_secrets(toml)
    assert secrets, f"deploy/{toml} names no broker secret"
    credentials = loaded_credentials(unit)
    for key, path in secrets:
        assert path.startswith(CREDENTIAL), f"deploy/{toml}: {key} = {path!r} is not a credential"
        name = path.removeprefix(CREDENTIAL)
        assert name in credentials, f"systemd/{unit} loads no credential {name!r} ({key})"
        assert credentials[name].startswith("/etc/credstore/"), credentials[name]


def test_no_unit_reads_a_secret_from_the_folder_the_jackpotd_group_reads() -> None:
    for unit in SHIPPED.values():
        for name, source in loaded_credentials(unit).items():
            assert not source.startswith("/etc/jackpotd"), (unit, name, source)


def configure(folder: Path) -> Path:
    path = folder / "jackpotd.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def handed_over(folder: Path, mode: int) -> Path:
    """``$CREDENTIALS_DIRECTORY`` as systemd fills it: the password file at ``mode``."""
    credentials = folder / "credentials"
    credentials.mkdir()
    secret = credentials / "mqtt-password-in"
    secret.write_text("password-in\n", encoding="utf-8")
    secret.chmod(mode)
    return credentials


def test_in_the_service_a_credential_path_is_the_file_systemd_handed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials = handed_over(tmp_path, 0o400)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    broker = load_config(configure(tmp_path)).settings("broker")
    assert broker is not None
    assert broker.password_file == str(credentials / "mqtt-password-in")


def test_a_credential_handed_over_open_to_every_user_is_refused_as_any_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(handed_over(tmp_path, 0o644)))
    with pytest.raises(ConfigError, match=r"broker\.password_file: .* is open to every user"):
        load_config(configure(tmp_path))


def test_a_credential_the_service_was_not_given_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "credentials"
    empty.mkdir()
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(empty))
    with pytest.raises(ConfigError, match=r"broker\.password_file: cannot read"):
        load_config(configure(tmp_path))


def test_at_a_shell_a_credential_path_is_kept_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
    broker = load_config(configure(tmp_path)).settings("broker")
    assert broker is not None
    assert broker.password_file == f"{CREDENTIAL}mqtt-password-in"  # as written
