"""``[wide_area]`` of central: the properties it links, checked.

controller/config/wide_area.py; docs/wide-area.md, "Configuration". Each linked property's id,
key and pools load into typed settings; every wrong key is refused naming the file, the key
and the reason; central judges a property's hits by a paytable one of its tables carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.config_files import error_of, load
from support.widearea.wide_area_config import CENTRAL, OTHER_SITE_KEY, SITE_KEY, edit

from controller.config.wide_area_settings import PropertySite, Role, WideAreaCentral

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.usefixtures("wide_area_files")


# -- central ------------------------------------------------------------------------------------


def test_central_loads_the_properties_it_links(tmp_path: Path) -> None:
    wide = load(tmp_path, CENTRAL).wide_area
    assert isinstance(wide, WideAreaCentral)
    assert wide.role is Role.CENTRAL
    assert wide.sites == (
        PropertySite("atlantic", SITE_KEY, ("mega",), "wide_area.sites[0]"),
        PropertySite("boardwalk.2", OTHER_SITE_KEY, ("mega",), "wide_area.sites[1]"),
    )
    assert wide.heartbeat_s == 5


SITE_ONE = f'id = "atlantic"\npublic_key = "{SITE_KEY}"\npools = ["mega"]'

CENTRAL_ERRORS = [
    (
        'role = "central"',
        'role = "central"\ngrace_s = 60',
        "wide_area.grace_s",
        "only a property sets it, and this controller is central",
    ),
    (
        'role = "central"',
        'role = "central"\nsite = "hub"',
        "wide_area.site",
        "only a property sets it",
    ),
    (
        'role = "central"',
        'role = "central"\n[wide_area.central]\nport = 8883\n',
        "wide_area.central",
        "only a property sets it",
    ),
    (
        'role = "central"',
        'role = "central"\nheartbeat_s = 0.5',
        "wide_area.heartbeat_s",
        "must be from 1 to 60 seconds, not 0.5",
    ),
    (
        'role = "central"',
        'role = "central"\nheartbeat_s = 61',
        "wide_area.heartbeat_s",
        "must be from 1 to 60 seconds",
    ),
    (
        'id = "boardwalk.2"',
        'id = "atlantic"',
        "wide_area.sites[1].id",
        "'atlantic' is also wide_area.sites[0].id",
    ),
    (
        'id = "boardwalk.2"',
        'id = "board walk"',
        "wide_area.sites[1].id",
        "use letters, digits, '.', '-' and '_'",
    ),
    (
        'id = "boardwalk.2"',
        'id = "boardwalk"\ncolour = "red"',
        "wide_area.sites[1].colour",
        "unknown field `colour`",
    ),
    (SITE_ONE, 'id = "atlantic"\npools = ["mega"]', "wide_area.sites[0].public_key", "required"),
    (
        SITE_ONE,
        f'{SITE_ONE}\npublic_key_file = "sites/boardwalk.pub"',
        "wide_area.sites[0].public_key_file",
        "not both",
    ),
    (
        SITE_ONE,
        SITE_ONE.replace(SITE_KEY, SITE_KEY[:-4]),
        "wide_area.sites[0].public_key",
        "not an Ed25519 public key",
    ),
    (
        'public_key_file = "sites/boardwalk.pub"',
        'public_key_file = "sites/x.pub"',
        "wide_area.sites[1].public_key_file",
        "cannot read",
    ),
    (
        SITE_ONE,
        SITE_ONE.replace('pools = ["mega"]', "pools = []"),
        "wide_area.sites[0].pools",
        "list the pools the property's tables feed",
    ),
    (
        SITE_ONE,
        SITE_ONE.replace('["mega"]', '["mega", "giga"]'),
        "wide_area.sites[0].pools[1]",
        "no pool 'giga'; configured: mega",
    ),
    (
        SITE_ONE,
        SITE_ONE.replace('["mega"]', '["mega", "mega"]'),
        "wide_area.sites[0].pools[1]",
        "'mega' is also wide_area.sites[0].pools[0]",
    ),
]


@pytest.mark.parametrize(("old", "new", "key", "reason"), CENTRAL_ERRORS)
def test_a_wrong_central_key_is_named_with_its_reason(
    tmp_path: Path, old: str, new: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, edit(CENTRAL, old, new))
    assert error.key == key
    assert reason in error.reason


def test_central_links_at_least_one_property(tmp_path: Path) -> None:
    error = error_of(tmp_path, CENTRAL[: CENTRAL.index("[[wide_area.sites]]")])
    assert (error.key, error.reason) == (
        "wide_area.sites",
        "link at least one property: a [[wide_area.sites]] entry each",
    )


def test_central_judges_a_pool_only_by_a_paytable_one_of_its_tables_carries(
    tmp_path: Path,
) -> None:
    """Central evaluates a property's hit claims against the paytable text a table carries."""
    giga = '[[pools]]\nid = "giga"\npaytable = "progressive-3"\n\n[[tables]]'
    text = edit(
        edit(CENTRAL, "[[tables]]", giga), SITE_ONE, SITE_ONE.replace('["mega"]', '["giga"]')
    )
    error = error_of(tmp_path, text)
    assert error.key == "wide_area.sites[0].pools[0]"
    assert error.reason.startswith(
        "pool 'giga' pays progressive-3, which no [[tables]] entry carries"
    )
