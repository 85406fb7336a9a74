"""The exact paytable analyzer: counts over every seven-card hand, by combinatorics, not sampling.

:mod:`.census` counts how many hands of a deck qualify for each exact set of lines;
:mod:`.ace_high` counts the dealer/player pairs that Ace High paytables need;
:mod:`.report` turns counts into probabilities, returns and house edges for a paytable.
See docs/analyzer.md.
"""
