"""58 Pa. Code § 688a.12(e): a maximum payout is refused only below what one player can win.

The floor is $50,000 or "the maximum amount that one player could win per round when betting
the minimum permissible wager, whichever is greater" (docs/regulations/, § 688a.12(e)). It
counts Envy only for a wager that qualifies for it (§ 688a.1: at least the $5 envy minimum), and
only pays that can be won together on one hand (controller/ledger/payout_floor.py). The file is
checked by the real command line, ``jackpotd config check``, as an operator runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.config_files import write

from controller.cli import main
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.settlement import TableRules
from controller.rules.paytable_files import find_paytable

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def table(minimum: str, cap: str, extra: str = "") -> str:
    return (
        '[controller]\nsite = "lab"\nid = "c1"\n\n[[tables]]\nid = "t1"\n'
        f'transport = "simulator"\nbonus = "fortune-2"\nminimum_wager = "{minimum}"\n'
        f'max_payout = "{cap}"\n{extra}'
    )


def check(folder: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    config = write(folder, text)
    status = main(["config", "check", str(config)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_688a12_e_fortune_2_at_a_4_dollar_minimum_earns_no_envy_and_takes_a_50000_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 8,000 to 1 on $4 is $32,000, the most one player betting the minimum can win: a $4
    # Fortune Bonus wager is no Qualifying Wager ($5, § 688a.1), so it earns no Envy.
    status, out, err = check(tmp_path, table("$4", "$50,000"), capsys)
    assert (status, err) == (0, "")
    assert "max payout $50,000.00" in out
    rules = TableRules("t1", seats=6, bonus=find_paytable("fortune-2"))
    assert most_one_player_wins(rules, 400) == 3_200_000


def test_688a12_e_at_a_5_dollar_minimum_the_envy_of_the_five_other_players_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # $40,000 for the 8,000 to 1, and the top $5,000 Envy for each of the 5 other players.
    status, _, err = check(tmp_path, table("$5", "$64,999.99"), capsys)
    assert status == 1
    assert err == (
        "jackpotd: jackpotd.toml: tables[0].max_payout: $64,999.99 is below the § 688a.12(e) "
        "floor of $65,000.00 ($50,000 or the most one player can win in a round betting the "
        "minimum, whichever is greater)\n"
    ).replace("jackpotd.toml", str(tmp_path / "jackpotd.toml"))
    assert check(tmp_path, table("$5", "$65,000"), capsys)[0] == 0


def test_688a12_e_the_ace_high_top_row_is_never_won_on_the_bonus_top_hand() -> None:
    # A seven-card straight flush (fortune-1's 5,000 to 1) is no pai gow hand, so beside it the
    # Ace High wager wins at most its best "dealer only" row (ace-high-2: 15 to 1 with the
    # joker), not its "both dealer and player" 40 to 1; and 5 other players' $1,000 Envy.
    rules = TableRules(
        "t1", seats=6, bonus=find_paytable("fortune-1"), ace_high=find_paytable("ace-high-2")
    )
    assert most_one_player_wins(rules, 500) == 500 * 5_000 + 500 * 15 + 100_000 * 5
