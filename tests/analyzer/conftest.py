"""The analyzer's tests share one analyzer a module (its deck's hands are counted once)."""

from __future__ import annotations

import pytest

from controller.analyzer.report import Analyzer


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    """The exact analyzer, its deck built once for the module."""
    return Analyzer()
