"""``[sign] controller_keys``: a sign station knows the keys its meters must be signed with."""

from __future__ import annotations

from pathlib import Path

import pytest
from config.test_sign_config import SHIPPED, VALID

from controller.config.schema import ConfigError
from controller.config.sign import load_sign_config, parse_sign_config
from controller.security.controller_key import ControllerKey

KEY = "0Q2ebTiUaGbuJSjlmRforxx0DtnuzmckM5i6+Wbtutw="
LINE = f'controller_keys = ["{KEY}"]\n'


def parse(text: str) -> tuple[str, ...]:
    return parse_sign_config(text.encode(), "sign.toml", Path("/etc/jackpotd")).controller_keys


def test_the_shipped_sample_names_each_nodes_key() -> None:
    assert len(load_sign_config(SHIPPED).controller_keys) == 2


def test_each_key_is_read_as_the_controller_printed_it() -> None:
    other = ControllerKey.generate().public_key
    assert parse(VALID.replace(LINE, f'controller_keys = ["{KEY}", " {other} "]\n')) == (
        KEY,
        other,
    )


@pytest.mark.parametrize(
    ("line", "key", "reason"),
    [
        ("", "sign.controller_keys", "would show any meter"),
        ("controller_keys = []\n", "sign.controller_keys", "write the public key"),
        ('controller_keys = ["not a key"]\n', "sign.controller_keys[0]", "not an Ed25519"),
        ('controller_keys = ["AAAA"]\n', "sign.controller_keys[0]", "not an Ed25519"),
        (f'controller_keys = ["{KEY}", "{KEY}"]\n', "sign.controller_keys[1]", "twice"),
        ("controller_keys = 3\n", "sign.controller_keys", "Expected `array`"),
    ],
)
def test_a_station_without_a_usable_key_is_refused_naming_file_key_and_reason(
    line: str, key: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(VALID.replace(LINE, line))
    assert refused.value.source == "sign.toml"
    assert refused.value.key == key, refused.value
    assert reason in refused.value.reason, refused.value


def test_the_shipped_station_keeps_the_hits_it_showed_in_its_units_state_folder() -> None:
    """docs/signs.md, "Signed meters": a hit replayed after a restart is not shown twice.

    The sample names the file, and systemd/jackpotd-sign.service makes the folder it is in
    (``StateDirectory=``, the service's own, /var/lib/<name>); a relative path is the file's
    folder's, and a station that names none keeps them in memory only.
    """
    kept = load_sign_config(SHIPPED).hits_seen
    assert kept == Path("/var/lib/jackpotd-sign/hits-seen")
    unit = (SHIPPED.parents[1] / "systemd" / "jackpotd-sign.service").read_text()
    assert f"StateDirectory={kept.parent.name}\n" in unit
    relative = VALID.replace(LINE, LINE + 'hits_seen = "state/hits"\n')
    config = parse_sign_config(relative.encode(), "sign.toml", Path("/etc/jackpotd"))
    assert config.hits_seen == Path("/etc/jackpotd/state/hits")
    assert parse_sign_config(VALID.encode(), "sign.toml", Path("/etc/jackpotd")).hits_seen is None
