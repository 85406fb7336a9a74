"""A mystery level's exact expected cost per wager (docs/analyzer.md, "Levels").

A mystery (must-hit-by) level is won by no hand but at its trigger ``T``, drawn uniformly to the
cent in ``[seed, must hit by)`` at each reseed (docs/rules.md § 10). Each wager adds
``c = rate of progression x wager`` cents to the meter, fractions of a cent kept, and the level
hits on the first contribution whose meter reaches ``T``: after ``N(T) = max(1, ceil((T -
seed) / c))`` wagers. The level then pays ``T``; the rest of that meter, ``seed + N c - T``,
goes past the trigger (to the level's overflow or the next level's meter), and the meter is
reseeded. A cycle's figures are renewal-reward ones: what a cycle costs over how many wagers it
lasts, both in expectation over the trigger.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.errors import JackpotError

if TYPE_CHECKING:
    from controller.rules.paytable import LevelTerms


class NotMysteryError(JackpotError, ValueError):
    """A mystery level's figures were asked of a level that hands win."""


def floor_sum(count: int, modulus: int, step: int, offset: int) -> int:
    """``sum(floor((step * i + offset) / modulus) for i in range(count))``, in O(log) steps.

    The Euclid-like reduction of the classic lattice-point count; arguments non-negative,
    ``modulus`` positive. It lets ``E[N]`` be summed exactly over a $10,000 range of triggers.
    """
    total = 0
    while True:
        if step >= modulus:
            total += (count - 1) * count // 2 * (step // modulus)
            step %= modulus
        if offset >= modulus:
            total += count * (offset // modulus)
            offset %= modulus
        highest = step * count + offset
        if highest < modulus:
            return total
        count, offset = highest // modulus, highest % modulus
        modulus, step = step, modulus


@dataclass(frozen=True, slots=True)
class MysteryCost:
    """The long-run figures of one mystery level on one wager amount (money in cents)."""

    level: LevelTerms
    wager_cents: int

    def __post_init__(self) -> None:
        if self.level.must_hit_by_cents is None:
            raise NotMysteryError(f"level {self.level.level!r} has no must-hit-by amount")

    @property
    def ceiling_cents(self) -> int:
        """The must-hit-by amount: the trigger is below it."""
        assert self.level.must_hit_by_cents is not None  # noqa: S101 - checked at creation
        return self.level.must_hit_by_cents

    @property
    def triggers(self) -> int:
        """How many cents the trigger may be, each with the same chance."""
        return self.ceiling_cents - self.level.meter_seed_cents

    @property
    def contribution_cents(self) -> Fraction:
        """``c``: what one wager adds to the level's meter."""
        return self.level.rate_of_progression * self.wager_cents

    @property
    def expected_trigger_cents(self) -> Fraction:
        """``E[T] = (seed + must hit by - 1) / 2``: what the level pays on average at a hit."""
        return Fraction(self.level.meter_seed_cents + self.ceiling_cents - 1, 2)

    @property
    def expected_wagers_per_cycle(self) -> Fraction:
        """``E[N(T)]``, exactly: the mean over the triggers of the wagers a cycle lasts.

        ``N(seed + k) = ceil(k q / p)`` for ``c = p / q`` and ``k >= 1``, and 1 for ``k = 0``
        (the first contribution reaches a trigger at the seed); ``ceil(x / p) = floor((x + p
        - 1) / p)``.
        """
        p, q = self.contribution_cents.numerator, self.contribution_cents.denominator
        past_the_seed = floor_sum(self.triggers, p, q, p - 1)  # its k = 0 term is 0
        return Fraction(1 + past_the_seed, self.triggers)

    @property
    def seed_cost_rate(self) -> Fraction:
        """The house's seed per unit wagered: ``seed / (E[N] x wager)``."""
        return self.level.meter_seed_cents / (self.expected_wagers_per_cycle * self.wager_cents)

    @property
    def cost_rate(self) -> Fraction:
        """Long-run cost per unit wagered: every contributed cent (``rate``), and the seed.

        Every cent contributed is paid to some player, at this level's hit or past its trigger
        (its overflow or the next level), so the contributions cost ``rate`` per unit wagered;
        the house funds one seed per cycle on top.
        """
        return self.level.rate_of_progression + self.seed_cost_rate

    @property
    def paid_rate(self) -> Fraction:
        """What the level's own hits pay per unit wagered: ``E[T] / (E[N] x wager)``."""
        return self.expected_trigger_cents / (self.expected_wagers_per_cycle * self.wager_cents)

    @property
    def past_trigger_rate(self) -> Fraction:
        """What goes past the trigger per unit wagered: ``E[seed + N c - T] / (E[N] x wager)``.

        With :attr:`paid_rate` it makes :attr:`cost_rate`: a cycle's seed and contributions
        are paid out at the hit or past the trigger, nothing kept.
        """
        return self.cost_rate - self.paid_rate

    @property
    def approximate_wagers_per_cycle(self) -> Fraction:
        """``E[(T - seed) / c]``: the continuous approximation of the wagers per cycle.

        ``E[N]`` exceeds it by at most one wager: each cycle's last contribution reaches its
        trigger by less than ``c`` past it (and a trigger at the seed takes one wager).
        """
        return Fraction(self.triggers - 1, 2) / self.contribution_cents
