"""A four-level paytable whose top level is a must-hit-by level, small enough to hit fast.

The grand is a mystery level from $10 to $12 at 10 % of a $5 wager (50 cents a wager), so a
trigger is reached within four wagers; its amount past the trigger goes to the major. The
major, minor and mini are paid by hands (docs/paytables.md, "Levels").
"""

from __future__ import annotations

from typing import Final

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
