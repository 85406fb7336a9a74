"""An operator's own insurance paytable file (not a shipped sample), for the insurance tests."""

from __future__ import annotations


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
