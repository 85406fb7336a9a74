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
