"""The insurance tests' paytables and hands: the shipped samples, and an operator's own file."""

from __future__ import annotations

from controller.rules.paytable_files import sample_paytables, seed_paytables

SAMPLES = sample_paytables()
SAMPLE_1 = SAMPLES["insurance-sample-1"]
SAMPLE_2 = SAMPLES["insurance-sample-2"]
FORTUNE = seed_paytables()["fortune-1"]
ACE_HIGH = seed_paytables()["ace-high-1"]
AT = "2026-12-01T10:00:00Z"

NINE_HIGH = "2c 3d 4h 5s 7c 8d 9h"
PAIR = "2c 2d 4h 5s 7c 8d 9h"
QUADS = "Jc Jd Jh Js 6c 5d Kh"


def house_insurance(changes: dict[str, str] | None = None) -> str:
    """An operator's own insurance paytable (the first sample's pays, no longer a sample)."""
    text = (
        'name = "house-insurance-1"\ntitle = "House insurance"\nwager = "insurance"\n'
        'source = "Rules submission, 2026"\njoker = "semi-wild"\n\n'
        '[[lines]]\nline = "insurance-nine-high"\noutcome = "Nine high"\npays = "500 to 1"\n\n'
        '[[lines]]\nline = "insurance-ace-high"\noutcome = "Ace high"\npays = "1 to 1"\n'
    )
    for old, new in (changes or {}).items():
        text = text.replace(old, new)
    return text
