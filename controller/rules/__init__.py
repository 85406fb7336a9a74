"""The rules of the game: cards, hand ranking, paytable lines, qualification and paytables.

Pure functions of the cards and the filed paytables (docs/rules.md). Nothing here does I/O or
knows about meters; :mod:`controller.ledger` settles rounds with these rules.
"""
