"""The values random event histories are drawn from: rates, paytables, hands, limits, amounts.

The pools' rates and reserve rates, the progressive and bonus paytables of the package, the big
hands a round may deal, the accounts an adjustment may name and the bonus wagers' limits and
amounts, each including the boundaries the ledger must refuse past.
"""

from __future__ import annotations

from importlib import resources

from controller.events import SpotLimits
from controller.rules.cards import DECK

AT = "2024-05-01T12:00:00Z"
RATES = ("0.28", "0.0075", "0.01", "0.17", "0.003", "0.0001", "0.333")
RESERVE_RATES = ("0", "0", "0.01", "0.0025", "0.05")
PROGRESSIVES = ("progressive-1", "progressive-4", "progressive-5")
BONUS = "fortune-1"
PAYTABLES = {
    name: (resources.files("controller") / "paytables" / f"{name}.toml").read_text()
    for name in (*PROGRESSIVES, BONUS)
}


BIG_HANDS = (
    "Ac Ad Ah As Jk 2d 3d",  # five aces
    "3c 4c 5c 6c 7c 8c 9c",  # natural seven-card straight flush
    "8h 9h Th Jh Qh Kh Ah",  # natural seven-card straight flush, ace high
    "3s 4s 5s 6s 7s 8s Jk",  # seven-card straight flush with the joker
    "Ts Js Qs Ks As Kh Qh",  # royal flush + royal match
    "Td Jd Qd Kd Ad Kc Qc",  # royal flush + royal match
    "9c 9d 9h 9s 2c 5d Jh",  # four of a kind
)


CODES = tuple(card.code for card in DECK)
ACCOUNTS = ("meter", "reserve", "overflow")
BONUS_LIMITS = (
    {"bonus": SpotLimits(100, 10_000)},
    {"bonus": SpotLimits(500, 2_500)},
    {"bonus": SpotLimits(1, 1)},
)


BONUS_AMOUNTS = (None, 1, 100, 499, 500, 2_500, 2_501, 10_000, 10_001, 10**12)
