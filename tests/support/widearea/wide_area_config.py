"""Configuration files of a wide-area link for the tests: a property's and central's.

``PROPERTY`` is a property (tests/support/config_files.py's ``BASE``) whose second table plays
central's pool ``mega``; ``CENTRAL`` is central owning ``mega`` and linking two properties,
``atlantic`` (its key in the file) and ``boardwalk.2`` (its key in a file).
``write_files(folder)`` writes the files they name beside them (central's CA, boardwalk's
public key). The keys are real Ed25519 keys, made per run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.security.controller_key import ControllerKey
from support.config_files import BASE, write

if TYPE_CHECKING:
    from pathlib import Path

CENTRAL_CONTROLLER = ControllerKey.generate()
ATLANTIC = ControllerKey.generate()
BOARDWALK = ControllerKey.generate()
CENTRAL_KEY = CENTRAL_CONTROLLER.public_key
SITE_KEY = ATLANTIC.public_key
OTHER_SITE_KEY = BOARDWALK.public_key

TABLES = (
    BASE
    + """
[[tables]]
id = "t2"
transport = "simulator"
bonus = "fortune-1"
progressive = "progressive-2"
pool = "mega"

"""
)
PROPERTY = (
    TABLES
    + f"""\
[wide_area]
role = "property"
site = "atlantic"
central_site = "hub"
central_key = "{CENTRAL_KEY}"
pools = ["mega"]

[wide_area.central]
hosts = ["central-a.example:8883", "central-b.example:8883"]
port = 8883

[wide_area.central.tls]
ca_file = "tls/central-ca.crt"
"""
)
CENTRAL = f"""\
[controller]
site = "hub"
id = "central-1"

[[pools]]
id = "mega"
paytable = "progressive-2"

[[tables]]
id = "house"
transport = "simulator"
progressive = "progressive-2"
pool = "mega"

[wide_area]
role = "central"

[[wide_area.sites]]
id = "atlantic"
public_key = "{SITE_KEY}"
pools = ["mega"]

[[wide_area.sites]]
id = "boardwalk.2"
public_key_file = "sites/boardwalk.pub"
pools = ["mega"]
"""


def write_files(folder: Path) -> None:
    """The files the configurations name: central's CA, a property's public key."""
    write(folder, "-----BEGIN CERTIFICATE-----\n", "tls/central-ca.crt")
    write(folder, f"{OTHER_SITE_KEY}\n", "sites/boardwalk.pub")


def edit(text: str, old: str, new: str) -> str:
    """``text`` with its first ``old`` replaced by ``new`` (which must be there)."""
    assert old in text, old
    return text.replace(old, new, 1)
