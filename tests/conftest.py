"""Shared test set-up: hypothesis profiles, and the real mosquitto broker fixture.

``mosquitto`` (from tests/support/drivers/mosquitto.py) starts a real broker on a free loopback
port; ``journal`` and ``table_journal`` (from tests/support/journal/journal_rig.py) are an empty
journal file and one holding a pool and a table, ``played`` and ``connection`` a journal file with a
few rounds; ``key`` (from tests/support/runtime/controller_keys.py) is a fresh controller signing
key; ``postgres_url`` (from tests/support/journal/postgres.py) is an empty database of its own on a
real PostgreSQL server the session starts on a loopback port; ``property_at`` and ``three_queued``
(from tests/support/journal/site_outbox.py) are a property's journal on each backend, and that
journal with three site messages queued for central.

The rigs live in ``tests/support/`` (a package) and are imported as ``from support.runtime.floor
import ...``: ``pythonpath = ["tests"]`` in pyproject.toml puts ``tests/`` on the path for every
test module wherever it sits, and the fixtures are registered here (``pytest_plugins``), never by
importing them into a test module. Scripts run as child processes by path
(``tests/support/journal/journal_child.py``) import only the installed packages.

``default`` keeps the local example database (under ``.hypothesis/``, git-ignored) so a failure
found once is replayed first next time. ``ci`` keeps no database and prints the reproduction
blob; it is loaded when ``CI`` is set, or by name with ``HYPOTHESIS_PROFILE=ci``. Neither has a
deadline: the first call into the rules engine may build its lookup tables.
"""

from __future__ import annotations

import os

from hypothesis import settings

pytest_plugins = [
    "support.runtime.controller_keys",
    "support.journal.journal_rig",
    "support.drivers.mosquitto",
    "support.journal.postgres",
    "support.journal.site_outbox",
    "support.journal.stalled_postgres",
]

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, database=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
