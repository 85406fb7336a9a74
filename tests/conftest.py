"""Shared test set-up: hypothesis profiles, and the real mosquitto broker fixture.

``mosquitto`` (from tests/mosquitto.py) starts a real broker on a free loopback port;
``played`` and ``connection`` (from tests/journal_rig.py) give a journal file with a few rounds.

``default`` keeps the local example database (under ``.hypothesis/``, git-ignored) so a failure
found once is replayed first next time. ``ci`` keeps no database and prints the reproduction
blob; it is loaded when ``CI`` is set, or by name with ``HYPOTHESIS_PROFILE=ci``. Neither has a
deadline: the first call into the rules engine may build its lookup tables.
"""

from __future__ import annotations

import os

from hypothesis import settings

pytest_plugins = ["journal_rig", "mosquitto"]

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, database=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
