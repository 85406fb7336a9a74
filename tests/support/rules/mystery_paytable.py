"""A four-level paytable whose top level is a must-hit-by level, small enough to hit fast.

The grand is a mystery level from $10 to $12 at 10 % of a $5 wager (50 cents a wager), so a
trigger is reached within four wagers; its amount past the trigger goes to the major. The
major, minor and mini are paid by hands (docs/paytables.md, "Levels").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

MYSTERY_PAYTABLE: Final = """\
name = "house-mystery"
title = "House mystery ($5 wager)"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false

[[progressive.levels]]
level = "grand"
meter_seed = "$10"
rate_of_progression = "10%"
reserve_rate = "1%"
must_hit_by = "$12"
past_trigger = "next-level"

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "2%"

[[progressive.levels]]
level = "mini"
meter_seed = "$150"
rate_of_progression = "1%"

[[lines]]
line = "seven-card-straight-flush"
outcome = "7 card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "five-aces"
outcome = "Five aces"
pays = "100% of meter"
level = "minor"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "100% of meter"
level = "mini"
"""

FLOOR: Final = """
[[pools]]
id = "stax"
paytable = "paytables/house-mystery.toml"

[web]
host = "127.0.0.1"
port = {port}
"""
"""The pool of :data:`MYSTERY_PAYTABLE` (filed as ``paytables/house-mystery.toml`` beside the
configuration, :func:`file_paytable`) and the display: the part of a daemon's configuration the
mystery floors share; ``{port}`` is the display's."""


def simulated_table(table_id: str) -> str:
    """A ``[[tables]]`` entry of a simulated table on the pool of :data:`FLOOR`."""
    return (
        f'\n[[tables]]\nid = "{table_id}"\ntransport = "simulator"\n'
        'progressive = "paytables/house-mystery.toml"\npool = "stax"\n'
    )


def file_paytable(folder: Path) -> None:
    """:data:`MYSTERY_PAYTABLE` filed as ``paytables/house-mystery.toml`` in ``folder``."""
    (folder / "paytables").mkdir(exist_ok=True)
    (folder / "paytables" / "house-mystery.toml").write_text(MYSTERY_PAYTABLE, encoding="utf-8")
