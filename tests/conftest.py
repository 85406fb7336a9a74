"""Shared hypothesis profiles for the property tests.

``default`` keeps the local example database (under ``.hypothesis/``, git-ignored) so a failure
found once is replayed first next time. ``ci`` keeps no database and prints the reproduction
blob; it is loaded when ``CI`` is set, or by name with ``HYPOTHESIS_PROFILE=ci``. Neither has a
deadline: the first call into the rules engine may build its lookup tables.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, database=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
