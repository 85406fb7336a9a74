"""The ``[broker]`` users: one for events in, optionally a second for meters out.

A broker that names every session after its user (``use_username_as_clientid``, as
deploy/mosquitto ships it) needs a user per connection (docs/mqtt.md, "Client ids and
sessions"): ``out_username`` and ``out_password_file`` give the sink its own. Without them both
connections log in as ``username``, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from controller.config.load import ConfigError, load_config

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """\
[controller]
site = "lab"
id = "c1"

[broker]
{broker}

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

TWO_USERS = """\
username = "jackpotd-in"
password_file = "secrets/in"
out_username = "jackpotd-out"
out_password_file = "secrets/out"
"""


def configure(folder: Path, broker: str) -> Path:
    """A configuration with this [broker] body, and the password files it may name (0640)."""
    for name in ("in", "out"):
        secret = folder / "secrets" / name
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text(f"password-{name}\n", encoding="utf-8")
        secret.chmod(0o640)
    path = folder / "jackpotd.toml"
    path.write_text(CONFIG.format(broker=broker), encoding="utf-8")
    return path


def test_each_connection_logs_in_as_its_own_user(tmp_path: Path) -> None:
    broker = load_config(configure(tmp_path, TWO_USERS)).settings("broker")
    assert broker is not None
    assert (broker.username, broker.password_file) == ("jackpotd-in", str(tmp_path / "secrets/in"))
    outbound = broker.outbound()
    assert (outbound.username, outbound.password_file) == (
        "jackpotd-out",
        str(tmp_path / "secrets/out"),
    )
    # The second connection differs only in its login.
    assert (outbound.host, outbound.port, outbound.client_id, outbound.tls) == (
        broker.host,
        broker.port,
        broker.client_id,
        broker.tls,
    )


def test_without_out_username_both_connections_log_in_as_username(tmp_path: Path) -> None:
    one_user = 'username = "jackpotd"\npassword_file = "secrets/in"\n'
    broker = load_config(configure(tmp_path, one_user)).settings("broker")
    assert broker is not None
    assert broker.outbound() == broker
    assert broker.outbound().username == "jackpotd"


@pytest.mark.parametrize(
    ("broker", "key", "reason"),
    [
        (
            TWO_USERS.replace('"jackpotd-out"', '"jackpotd-in"'),
            "broker.out_username",
            "is broker.username: each connection needs its own user",
        ),
        (
            'out_password_file = "secrets/out"\n',
            "broker.out_password_file",
            "a password needs broker.out_username",
        ),
        ('out_username = "jackpotd-out"\n', "broker.out_username", "needs broker.username"),
        (
            TWO_USERS.replace('"secrets/out"', '"secrets/missing"'),
            "broker.out_password_file",
            "cannot read",
        ),
    ],
    ids=["same-user", "password-without-user", "out-user-alone", "missing-file"],
)
def test_a_wrong_second_user_is_refused(tmp_path: Path, broker: str, key: str, reason: str) -> None:
    path = configure(tmp_path, broker)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.key, str(path)) == (key, caught.value.source)
    assert reason in caught.value.reason


def test_a_second_password_file_open_to_other_users_is_refused(tmp_path: Path) -> None:
    path = configure(tmp_path, TWO_USERS)
    (tmp_path / "secrets" / "out").chmod(0o644)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == "broker.out_password_file"
    assert "open to every user (mode 644)" in caught.value.reason
