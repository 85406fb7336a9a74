"""The controller's signing key for tests that run the daemon: ``jackpotd run`` needs one.

``write_controller_key(folder)`` writes a fresh key as ``folder/controller.key`` (mode 0600,
as ``jackpotd key generate`` does) and returns it; a configuration in ``folder`` names it with
:data:`KEY_LINE` in its ``[controller]`` table. Import it as
``from support.runtime.controller_keys import KEY_LINE, write_controller_key`` (tests/ is on the
path; see tests/conftest.py). The fixture ``key`` is a fresh key held in memory, for the tests that
sign checkpoints without a daemon; tests/conftest.py registers it for every test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pytest

from controller.security.controller_key import ControllerKey, write_key

if TYPE_CHECKING:
    from pathlib import Path

KEY_FILE: Final = "controller.key"
KEY_LINE: Final = f'key_file = "{KEY_FILE}"\n'
"""The ``[controller]`` line naming the key, relative to the configuration's folder."""


def write_controller_key(folder: Path, name: str = KEY_FILE) -> ControllerKey:
    """A new controller key written to ``folder/name`` (0600); the key, for checks."""
    folder.mkdir(parents=True, exist_ok=True)
    key = ControllerKey.generate()
    write_key(folder / name, key)
    return key


@pytest.fixture
def key() -> ControllerKey:
    return ControllerKey.generate()
