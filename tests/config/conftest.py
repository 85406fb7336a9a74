"""The configuration's tests: the files a wide-area link's configuration names, when asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.widearea.wide_area_config import write_files

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def wide_area_files(tmp_path: Path) -> None:
    """Central's key, the link's password and its TLS files, beside the test's configuration."""
    write_files(tmp_path)
