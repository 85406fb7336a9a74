"""Hypothesis strategies for seven-card hands: any hand, and hands biased toward the rare lines."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from support.rules import oracle

SUITS = oracle.SUIT_SYMBOLS
JOKER = oracle.JOKER
ALL_CODES = oracle.ALL_CODES


def code(rank: int, suit: str) -> str:
    """A card code; rank 1 is the ace (as the low card of a run)."""
    return oracle.RANK_SYMBOLS[(oracle.ACE if rank == 1 else rank) - 2] + suit


any_seven = st.lists(st.sampled_from(ALL_CODES), min_size=7, max_size=7, unique=True)
distinct_ranks = functools.partial(st.lists, st.integers(2, oracle.ACE), unique=True)
THEMES = (
    *("run", "royal", "royal", "wheel", "wheel", "sets", "quads-joker"),
    *("ace-high", "joker-high", "flush", "random", "pai-gow"),
)


@st.composite
def templates(draw: st.DrawFn) -> list[str]:
    """Up to seven cards built to make a rare line, before the joker and any mutation."""
    suit, other = draw(st.permutations(SUITS))[:2]
    # Weighted toward the rarest lines: the royal and wheel matches and five aces.
    theme = draw(st.sampled_from(THEMES))
    if theme == "run":  # seven-card straight flushes, ace low or high
        low = draw(st.integers(1, 8))
        return [code(rank, suit) for rank in range(low, low + 7)]
    if theme == "royal":  # royal flush plus a match
        match = draw(
            st.sampled_from([(13, 12), (14, 13), (14, 12), (13, 12), (14, 13), (14, 12), (12, 11)])
        )
        return [code(rank, suit) for rank in range(10, 15)] + [code(r, other) for r in match]
    if theme == "wheel":  # natural A-5 straight flush plus a match
        match = draw(st.sampled_from([(14, 12), (14, 12), (14, 13), (6, 7)]))
        return [code(rank, suit) for rank in range(1, 6)] + [code(r, other) for r in match]
    if theme == "sets":  # quads, five aces and five of a kind, full house, three pair
        shape = draw(st.sampled_from([(4, 2, 1), (4, 3), (3, 3, 1), (3, 2, 2), (2, 2, 2, 1)]))
        first = oracle.ACE if draw(st.booleans()) else draw(st.integers(2, oracle.ACE))
        rest = draw(distinct_ranks(min_size=len(shape) - 1, max_size=len(shape) - 1))
        ranks = [first, *(rank for rank in rest if rank != first)]
        cards = []
        for rank, count in zip(ranks, shape, strict=False):
            cards += [code(rank, s) for s in draw(st.permutations(SUITS))[:count]]
        return cards
    if theme == "quads-joker":  # five aces, five of a kind (the rest is filled in at random)
        rank = oracle.ACE if draw(st.booleans()) else draw(st.integers(2, oracle.ACE))
        return [*(code(rank, s) for s in SUITS), JOKER]
    if theme in {"ace-high", "joker-high"}:  # seven different ranks, the ace or the joker top
        ranks = draw(st.lists(st.integers(2, oracle.KING), min_size=6, max_size=6, unique=True))
        top = code(oracle.ACE, other) if theme == "ace-high" else JOKER
        return [top, *(code(rank, draw(st.sampled_from(SUITS))) for rank in ranks)]
    if theme == "pai-gow":  # seven different ranks up to a top card: the insurance lines
        highest = draw(st.integers(9, oracle.KING))
        ranks = draw(st.lists(st.integers(2, highest - 1), min_size=6, max_size=6, unique=True))
        return [code(rank, draw(st.sampled_from(SUITS))) for rank in (*ranks, highest)]
    if theme == "flush":  # five or six of one suit
        ranks = draw(distinct_ranks(min_size=7, max_size=7))
        suits = [suit] * draw(st.integers(5, 6))
        suits += [draw(st.sampled_from(SUITS)) for _ in range(7 - len(suits))]
        return list(dict.fromkeys(code(r, s) for r, s in zip(ranks, suits, strict=True)))
    return draw(any_seven)


@st.composite
def rich_hands(draw: st.DrawFn) -> list[str]:
    """Hands biased to the rare lines: a template, maybe the joker, maybe a changed card."""
    hand = draw(templates())
    if JOKER not in hand and draw(st.booleans()):
        hand[draw(st.integers(0, len(hand) - 1))] = JOKER
    while len(hand) < 7:
        hand.append(draw(st.sampled_from([c for c in ALL_CODES if c not in hand])))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        hand[draw(st.integers(0, 6))] = draw(
            st.sampled_from([c for c in ALL_CODES if c not in hand])
        )
    return hand
