"""``[wide_area]`` of a property: its link to central, checked.

controller/config/wide_area.py; docs/wide-area.md, "Configuration". The keys load into typed
settings; every wrong key is refused naming the file, the key and the reason; the link to
central is TLS or nothing (Michigan R 432.1841); a wide-area pool is central's, never a local
one, and a property's table may play it. Central's keys: test_config_wide_area_central.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import error_of, load, write
from support.widearea.wide_area_config import CENTRAL_KEY, PROPERTY, TABLES, edit

from controller.config.wide_area_settings import Role, WideAreaProperty
from drivers.mqtt.settings import BrokerSettings

if TYPE_CHECKING:
    from pathlib import Path

KEY_LINE = f'central_key = "{CENTRAL_KEY}"'
POOLS_LINE = 'pools = ["mega"]'
TLS = '[wide_area.central.tls]\nca_file = "tls/central-ca.crt"\n'

pytestmark = pytest.mark.usefixtures("wide_area_files")


# -- a property ---------------------------------------------------------------------------------


def test_a_property_loads_its_link_to_central(tmp_path: Path) -> None:
    config = load(tmp_path, PROPERTY)
    wide = config.wide_area
    assert isinstance(wide, WideAreaProperty)
    assert wide.role is Role.PROPERTY
    assert (wide.site, wide.central_key, dict(wide.pools)) == (
        "atlantic",
        CENTRAL_KEY,
        {"mega": "progressive-2"},
    )
    assert wide.grace_s == 60
    central = wide.central
    assert isinstance(central, BrokerSettings)
    assert central.addresses() == [("central-a.example", 8883), ("central-b.example", 8883)]
    assert central.tls is not None
    assert central.tls.ca_file == str(tmp_path / "tls/central-ca.crt")
    assert central.client_id == "site-atlantic"  # one session per property at central
    # The file's digest covers the section.
    assert (
        config.digest
        != load(tmp_path, edit(PROPERTY, POOLS_LINE, f"{POOLS_LINE}\ngrace_s = 61")).digest
    )


def test_a_lone_site_has_no_wide_area(tmp_path: Path) -> None:
    lone = TABLES.replace(
        'progressive = "progressive-2"\npool = "mega"',
        'progressive = "progressive-1"\npool = "main"',
    )
    assert load(tmp_path, lone).wide_area is None


def test_a_table_on_a_wide_area_pool_is_accepted_only_at_a_property_that_plays_it(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, PROPERTY)
    assert [table.event.pool_id for table in config.tables] == ["main", "mega"]
    refused = error_of(tmp_path, TABLES)  # the same table without [wide_area]
    assert (refused.key, refused.reason) == ("tables[1].pool", "no pool 'mega'; configured: main")


def test_central_key_file_is_read_relative_to_the_file_or_from_systemds_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, f"  {CENTRAL_KEY}\n", "keys/central.pub")
    by_file = edit(
        PROPERTY, f'central_key = "{CENTRAL_KEY}"', 'central_key_file = "keys/central.pub"'
    )
    wide = load(tmp_path, by_file).wide_area
    assert isinstance(wide, WideAreaProperty)
    assert wide.central_key == CENTRAL_KEY
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "keys"))
    credential = edit(
        PROPERTY,
        f'central_key = "{CENTRAL_KEY}"',
        'central_key_file = "${CREDENTIALS_DIRECTORY}/central.pub"',
    )
    wide = load(tmp_path, credential).wide_area
    assert isinstance(wide, WideAreaProperty)
    assert wide.central_key == CENTRAL_KEY


PROPERTY_ERRORS = [
    ('role = "property"', "", "wide_area.role", "missing required field `role`"),
    (
        'role = "property"',
        'role = "hub"',
        "wide_area.role",
        "'hub' is not one of 'property', 'central'",
    ),
    (
        'role = "property"',
        'role = "property"\ncolour = "red"',
        "wide_area.colour",
        "unknown field `colour`",
    ),
    ('site = "atlantic"', "", "wide_area.site", "required: this property's id at central"),
    (
        'site = "atlantic"',
        'site = "at lantic"',
        "wide_area.site",
        "use letters, digits, '.', '-' and '_'",
    ),
    ('central_site = "hub"', "", "wide_area.central_site", "required: central's [controller] site"),
    ('central_site = "hub"', 'central_site = "hub/+"', "wide_area.central_site", "required"),
    (KEY_LINE, "", "wide_area.central_key", "required: the controller's public key"),
    (KEY_LINE, 'central_key = "abc"', "wide_area.central_key", "not an Ed25519 public key"),
    (KEY_LINE, f'{KEY_LINE}\ncentral_key_file = "k.pub"', "wide_area.central_key_file", "not both"),
    (
        KEY_LINE,
        'central_key_file = "nowhere.pub"',
        "wide_area.central_key_file",
        "cannot read the public key",
    ),
    (POOLS_LINE, "", "wide_area.pools", "list the wide-area pools this property's tables play"),
    (
        POOLS_LINE,
        'pools = ["mega", "mega"]',
        "wide_area.pools[1]",
        "'mega' is also wide_area.pools[0]",
    ),
    (
        POOLS_LINE,
        'pools = ["mega", "giga"]',
        "wide_area.pools[1]",
        "no [[tables]] entry plays 'giga'",
    ),
    (
        POOLS_LINE,
        'pools = ["mega", "x/y"]',
        "wide_area.pools[1]",
        "use letters, digits, '-' and '_'",
    ),
    (
        POOLS_LINE,
        f"{POOLS_LINE}\ngrace_s = 4",
        "wide_area.grace_s",
        "must be from 5 to 3600 seconds, not 4",
    ),
    (
        POOLS_LINE,
        f"{POOLS_LINE}\ngrace_s = 3601",
        "wide_area.grace_s",
        "must be from 5 to 3600 seconds",
    ),
    (POOLS_LINE, f"{POOLS_LINE}\nheartbeat_s = 5", "wide_area.heartbeat_s", "only central sets it"),
    (
        POOLS_LINE,
        f"{POOLS_LINE}\nsites = []",
        "wide_area.sites",
        "only central sets it, and this controller is a property",
    ),
    (
        "port = 8883",
        'port = 8883\ncolour = "red"',
        "wide_area.central.colour",
        "unknown field `colour`",
    ),
    (
        "port = 8883",
        'port = 8883\nsite = "hub"',
        "wide_area.central.site",
        "set once, as controller.site",
    ),
    ("port = 8883", "port = 70000", "wide_area.central.port", "a TCP port is 1 to 65535"),
    (
        TLS,
        "",
        "wide_area.central.tls",
        "required: the link to central is encrypted (Michigan R 432.1841)",
    ),
    (
        TLS,
        "[wide_area.central.tls]\n",
        "wide_area.central.tls.ca_file",
        "missing required field `ca_file`",
    ),
    (
        'ca_file = "tls/central-ca.crt"',
        'ca_file = "tls/none.crt"',
        "wide_area.central.tls.ca_file",
        "cannot read",
    ),
    (
        'ca_file = "tls/central-ca.crt"',
        'ca_file = "tls/central-ca.crt"\ninsecure_skip_hostname_check = true',
        "wide_area.central.tls.insecure_skip_hostname_check",
        "a link to central checks that it reached central",
    ),
]


@pytest.mark.parametrize(("old", "new", "key", "reason"), PROPERTY_ERRORS)
def test_a_wrong_property_key_is_named_with_its_reason(
    tmp_path: Path, old: str, new: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, edit(PROPERTY, old, new))
    assert error.source == str(tmp_path / "jackpotd.toml")
    assert error.key == key
    assert reason in error.reason
    assert str(error).startswith(f"{error.source}: {key}: ")


def test_a_property_without_central_brokers_is_refused(tmp_path: Path) -> None:
    without = PROPERTY[: PROPERTY.index("[wide_area.central]")]
    error = error_of(tmp_path, without)
    assert error.key == "wide_area.central"
    assert "write a [wide_area.central] table" in error.reason


def test_a_plain_text_link_to_central_is_a_configuration_error(tmp_path: Path) -> None:
    """Michigan R 432.1841: traffic between a site and central is encrypted."""
    plain = edit(PROPERTY, TLS, "").replace("8883", "1883")
    error = error_of(tmp_path, plain)
    assert (error.key, error.reason) == (
        "wide_area.central.tls",
        (
            "required: the link to central is encrypted (Michigan R 432.1841); write "
            "[wide_area.central.tls] with central's CA"
        ),
    )


def test_a_wide_area_pool_that_is_also_a_local_pool_is_refused(tmp_path: Path) -> None:
    both = edit(PROPERTY, POOLS_LINE, 'pools = ["mega", "main"]')
    error = error_of(tmp_path, both)
    assert (error.key, error.reason) == (
        "wide_area.pools[1]",
        (
            "'main' is also a local pool (pools[0]): a wide-area pool is central's; keep it in "
            "one of them"
        ),
    )


def test_every_table_on_a_wide_area_pool_plays_one_paytable(tmp_path: Path) -> None:
    third = (
        '[[tables]]\nid = "t3"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-3"\npool = "mega"\n\n[wide_area]'
    )
    error = error_of(tmp_path, edit(PROPERTY, "[wide_area]", third))
    assert error.key == "tables[2].progressive"
    assert error.reason == (
        "wide-area pool 'mega' is played with progressive-2 by tables[1], not progressive-3: "
        "one pool, one paytable"
    )
