"""A sign station's configuration file: typed, checked, every error naming file, key and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config.schema import ConfigError
from controller.config.sign import load_sign_config, parse_sign_config
from drivers.mqtt.settings import BrokerSettings
from drivers.signs.serial_sign import AlphaSignSettings

SHIPPED = Path(__file__).parents[2] / "deploy" / "sign.toml"

VALID = """
[sign]
name = "pit-2"
site = "riverside"
controller_keys = ["0Q2ebTiUaGbuJSjlmRforxx0DtnuzmckM5i6+Wbtutw="]

[broker]
hosts = ["node1:1883", "node2:1883"]
username = "sign"

[[alpha_sign]]
name = "east"
url = "/dev/ttyUSB0"
pool_id = "main"

[[alpha_sign]]
name = "west"
url = "/dev/ttyUSB1"
pool_id = "side"
"""


def test_the_shipped_sample_is_a_valid_station() -> None:
    config = load_sign_config(SHIPPED)
    assert config.name == "pit-2-east"
    assert config.pools == ("fortune-floor",)
    assert isinstance(config.broker, BrokerSettings)
    assert config.broker.client_id == "sign-pit-2-east"
    assert config.broker.username == "sign"
    assert config.broker.site == "riverside"
    (sign,) = config.signs
    assert isinstance(sign, AlphaSignSettings)
    assert (sign.name, sign.pool_id, sign.tables) == ("east-1", "fortune-floor", ["t1", "t2"])


def test_without_pools_a_station_follows_the_pools_of_its_signs() -> None:
    config = parse_sign_config(VALID.encode(), "sign.toml", Path("/etc/jackpotd"))
    assert config.pools == ("main", "side")
    assert isinstance(config.broker, BrokerSettings)
    assert config.broker.addresses() == [("node1", 1883), ("node2", 1883)]


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        (("[broker]\nhosts", "[other]\nhosts"), "other", "unknown field"),
        (('name = "pit-2"', 'name = "pit 2"'), "sign.name", "use letters"),
        (('name = "pit-2"\n', 'name = "pit-2"\ncolour = "red"\n'), "sign.colour", "unknown"),
        (('site = "riverside"', 'site = "riverside"\npools = ["main"]'), "alpha_sign[1].pool_id",
         "not one of sign.pools"),
        (('name = "west"', 'name = "east"'), "alpha_sign[1].name", "also alpha_sign[0]"),
    ],
)  # fmt: skip
def test_a_bad_station_is_refused_naming_file_key_and_reason(
    change: tuple[str, str], key: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_sign_config(VALID.replace(*change).encode(), "sign.toml", Path("/etc/jackpotd"))
    assert refused.value.source == "sign.toml"
    assert refused.value.key == key, refused.value
    assert reason in refused.value.reason, refused.value


def test_a_station_needs_a_broker_and_a_sign() -> None:
    no_broker = VALID.replace(
        '[broker]\nhosts = ["node1:1883", "node2:1883"]\nusername = "sign"', ""
    )
    for text, key in ((no_broker, "broker"), (VALID.partition("[[alpha_sign]]")[0], "alpha_sign")):
        with pytest.raises(ConfigError) as refused:
            parse_sign_config(text.encode(), "sign.toml", Path("/etc/jackpotd"))
        assert refused.value.key == key, refused.value


def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sign\.toml: \(file\): cannot read"):
        load_sign_config(tmp_path / "sign.toml")
