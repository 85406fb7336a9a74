"""Configuration files for the tests: a valid base file, edits of it, and loading them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from controller.config.load import Config, ConfigError, load_config

if TYPE_CHECKING:
    from pathlib import Path

BASE = """\
[controller]
site = "lab"
id = "c1"

[[pools]]
id = "main"
paytable = "progressive-1"

[[tables]]
id = "t1"
transport = "simulator"
bonus = "fortune-1"
progressive = "progressive-1"
pool = "main"
"""


def write(folder: Path, text: str, name: str = "jackpotd.toml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load(folder: Path, text: str) -> Config:
    return load_config(write(folder, text))


def error_of(folder: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(folder, text)
    return caught.value


def edited(old: str, new: str) -> str:
    """BASE with ``old`` replaced by ``new``, or with ``new`` appended when ``old`` is empty."""
    if not old:
        return BASE + new
    assert old in BASE
    return BASE.replace(old, new, 1)
