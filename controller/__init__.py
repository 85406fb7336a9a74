"""Progressive jackpot controller for networked Pai Gow Poker tables: the pure core.

``controller`` decides (cards, rules, paytables, money, pools, settlement, the journal);
``drivers`` talk to devices and brokers. See README.md and docs/.
"""

__version__ = "0.1.0"
