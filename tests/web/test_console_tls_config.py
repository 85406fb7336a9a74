"""``[web]`` TLS and the console's relying party: each mistake one line naming file, key, reason.

docs/operations.md, "The supervisors' console" (controller/config/web_section.py). The
console's passkeys need a secure context, and their relying party id and origin come from the
configuration; a setting that cannot give them stops the start before anything listens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import check
from support.runtime.floor import write_config
from support.web.console_tls import CONSOLE_HOST, certificate

from controller.config.load import ConfigError, load_config

if TYPE_CHECKING:
    from pathlib import Path

    from controller.config.load import Config


def _config(folder: Path, web: str, *, socket: bool = True) -> Path:
    """The floor's configuration (a table on a line that need not exist) with ``[web]`` lines."""
    path = write_config(folder, "tls", {"T1": "/dev/null"}, 8443)
    text = path.read_text("utf-8").replace('[web]\nhost = "127.0.0.1"\n', f"[web]\n{web}\n")
    if socket:
        text = text.replace("[controller]\n", '[controller]\noperator_socket = "operator.sock"\n')
    path.write_text(text, "utf-8")
    return path


def _refused(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value).startswith(f"{path}: {raised.value.key}: ")
    return raised.value


def _loaded(folder: Path, web: str) -> Config:
    return load_config(_config(folder, web))


def test_a_localhost_bind_serves_the_console_at_localhost_by_default(tmp_path: Path) -> None:
    web = _loaded(tmp_path, 'host = "127.0.0.1"').web
    assert (web.console_rp_id, web.console_origin) == ("localhost", "http://localhost:8443")


def test_tls_files_are_made_absolute_and_the_origin_is_https(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    web = _loaded(
        tmp_path,
        f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\n'
        f'tls_key = "{made.key.name}"\nconsole_rp_id = "Console.Test"',
    ).web
    assert (web.tls_cert, web.tls_key) == (str(made.cert), str(made.key))
    assert (web.console_rp_id, web.console_origin) == (CONSOLE_HOST, "https://console.test:8443")


def test_config_check_names_the_port_https_once_it_has_a_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    path = _config(
        tmp_path,
        f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\n'
        f'tls_key = "{made.key.name}"\nconsole_rp_id = "console.test"',
    )
    status, out, _ = check(capsys, str(path))
    assert status == 0
    assert "web: https://0.0.0.0:8443/" in out


def test_a_certificate_without_its_key_is_refused(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    error = _refused(_config(tmp_path, f'tls_cert = "{made.cert.name}"'))
    assert error.key == "web.tls_key"


def test_a_key_without_its_certificate_is_refused(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    error = _refused(_config(tmp_path, f'tls_key = "{made.key.name}"'))
    assert error.key == "web.tls_cert"


def test_a_certificate_and_another_certificate_s_key_are_refused(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    other_folder = tmp_path / "other"
    other_folder.mkdir()
    other = certificate(other_folder, CONSOLE_HOST)
    error = _refused(_config(tmp_path, f'tls_cert = "{made.cert.name}"\ntls_key = "{other.key}"'))
    assert error.key == "web.tls_cert"
    assert "not a PEM certificate and its key" in error.reason


def test_a_key_other_users_may_read_is_refused(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    made.key.chmod(0o644)
    error = _refused(
        _config(tmp_path, f'tls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"')
    )
    assert error.key == "web.tls_key"


def test_a_missing_certificate_is_refused(tmp_path: Path) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    error = _refused(_config(tmp_path, f'tls_cert = "gone.pem"\ntls_key = "{made.key.name}"'))
    assert (error.key, "gone.pem" in error.reason) == ("web.tls_cert", True)


def test_a_relying_party_on_a_port_other_machines_reach_without_tls_is_refused(
    tmp_path: Path,
) -> None:
    error = _refused(_config(tmp_path, f'host = "0.0.0.0"\nconsole_rp_id = "{CONSOLE_HOST}"'))
    assert error.key == "web.tls_cert"
    assert "secure context" in error.reason


def test_tls_on_a_port_other_machines_reach_needs_the_console_s_host_name(
    tmp_path: Path,
) -> None:
    made = certificate(tmp_path, CONSOLE_HOST)
    web = f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"'
    assert _refused(_config(tmp_path, web)).key == "web.console_rp_id"
    other = tmp_path / "no-console"
    other.mkdir()
    made = certificate(other, CONSOLE_HOST)
    web = f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"'
    assert load_config(_config(other, web, socket=False)).web.tls_cert  # no console: no name


@pytest.mark.parametrize("rp_id", ["127.0.0.1", "https://console.test", "console.test:8443"])
def test_a_relying_party_id_that_is_not_a_host_name_is_refused(tmp_path: Path, rp_id: str) -> None:
    error = _refused(_config(tmp_path, f'console_rp_id = "{rp_id}"'))
    assert error.key == "web.console_rp_id"


@pytest.mark.parametrize(
    ("origin", "why"),
    [
        ("https://console.test:8443", "plain HTTP"),
        ("http://elsewhere.example:8443", "neither the relying party id"),
        ("http://localhost:8443/console/", "not an origin"),
        ("localhost:8443", "not an origin"),
    ],
)
def test_an_origin_the_console_is_not_served_at_is_refused(
    tmp_path: Path, origin: str, why: str
) -> None:
    error = _refused(_config(tmp_path, f'console_origin = "{origin}"'))
    assert (error.key, why in error.reason) == ("web.console_origin", True), error.reason
