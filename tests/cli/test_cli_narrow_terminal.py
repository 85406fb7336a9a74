"""Nothing a supervisor needs is cut off: amounts and ids whole on a terminal of any width.

docs/operations.md, "Verify a jackpot": ``jackpotd hits --pending`` lists the pays waiting
for a supervisor, who copies a pay's id into ``jackpotd verify-hit``. On an 80-column terminal
the table used to show ``$1,2…`` and ``T1/s…``, at 120 the id was still cut, and ``report``
cut every amount at 80. The table renderer (controller/cli/tables.py) now keeps figures and
ids whole: the other columns wrap, and a terminal too narrow for that shows one block of
``header  value`` lines per row.

Each command runs under a real pseudo-terminal set to 80 and to 120 columns (``TIOCSWINSZ``,
as a terminal emulator sets it). What it showed must hold every amount and every id whole,
exactly the set the same command prints piped (tab-separated, never cut), with no ellipsis
anywhere; and the id read off the screen is pasted into ``verify-hit``, which pays it. A
control character in a value (a hostile device's round id) is shown as U+FFFD: it never
reaches the terminal to clear it or retitle its window.
"""

from __future__ import annotations

import re
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.cli.terminal import on_a_terminal
from support.journal.journal_rig import FIVE_ACES as FIVE_ACES_RIG
from support.journal.journal_rig import opened_journal, settle, wager
from support.ledger.approvals import PASSPHRASE, Site

from controller.events import (
    ConfigurationApproved,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    WagerLocked,
)
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-11-29T15:00:00Z"
MANAGER = "Morgan Manager"
SUPERVISOR = "Dana Supervisor"
TABLE = "T12"
SHOE = "T12/shoe-07f6b07f"
FIVE_ACES = ["Ac", "Ad", "Ah", "As", "Jk", "2d", "3d"]
STRAIGHT_FLUSH = ["9h", "Th", "Jh", "Qh", "Kh", "Ah", "8h"]
NOTHING = ["2c", "4c", "6d", "8h", "Ts", "Qd", "9c"]
DEALER = ["3c", "4d", "6s", "8d", "Tc", "Qc", "7s"]
MONEY = re.compile(r"-?\$[0-9][0-9,]*\.[0-9]{2}")
WIDTHS = (80, 120)


def paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


@pytest.fixture
def narrow_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A signed site: a seven-figure meter, two jackpots pending under long pay ids.

    Ids as a floor's are (the table, its shoe, the round, the seat), the supervisor's key file
    beside the journal under the tests' passphrase, which ``verify-hit`` reads from the
    environment.
    """
    path = tmp_path / "journal.db"
    with Journal(path) as opened:
        site = Site.create(opened, manager=MANAGER, supervisors=(SUPERVISOR,))
        approval = ConfigurationApproved(
            "configuration-1", AT, "digest-of-the-floor",
            [
                PoolOpened("pool", AT, "P1-main-floor", "progressive-1", 123_456_789,
                           Decimal("0.28")),
                TableConfigured(
                    "table", AT, TABLE, {"progressive-1": paytable("progressive-1")},
                    progressive="progressive-1", pool_id="P1-main-floor",
                    verification_cents=100_000, envy_includes_dealer=False,
                ),
            ],
            MANAGER,
        )  # fmt: skip
        site.append(site.sign(approval, MANAGER))
        for number, hands in ((353, {1: FIVE_ACES, 2: NOTHING}), (354, {3: STRAIGHT_FLUSH})):
            round_id = f"{SHOE}/{number}"
            for seat in hands:
                wager = WagerLocked(f"{round_id}/w{seat}", AT, TABLE, round_id, seat,
                                    "progressive", 100)  # fmt: skip
                site.append(site.sign(wager, SUPERVISOR))
            cards = {str(seat): hand for seat, hand in hands.items()}
            settled = RoundSettled(round_id, AT, TABLE, round_id, DEALER, cards)
            site.append(site.sign(settled, SUPERVISOR))
        site.key_file(SUPERVISOR, tmp_path)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    return path


def piped(capsys: pytest.CaptureFixture[str], *argv: str) -> list[list[str]]:
    """The command's table as a pipe gets it: the header line, then one row a line."""
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    return [line.split("\t") for line in out.splitlines() if "\t" in line]


def shown_ids(shown: str) -> list[str]:
    """The pay ids a supervisor reads off the screen: a table's first cells, or ``pay`` lines."""
    ids = []
    for line in shown.splitlines():
        if line.startswith("pay "):  # one block a pay
            ids.append(line.split(None, 1)[1].strip())
        elif line.startswith("│"):  # a drawn row; a wrapped row's next lines start blank
            first = line.split("│")[1].strip()
            if first:
                ids.append(first)
    return ids


def on_screen(columns: int, *argv: str) -> str:
    status, shown, _ = on_a_terminal(
        *argv, stdout_too=True, columns=columns, env={"TZ": "America/New_York"}
    )
    assert status == 0, shown
    assert "…" not in shown, shown  # nothing cut
    return shown


@pytest.mark.parametrize("columns", WIDTHS)
def test_pending_pays_show_every_amount_and_id_whole_and_the_id_pastes_into_verify_hit(
    narrow_journal: Path, columns: int, capsys: pytest.CaptureFixture[str]
) -> None:
    header, *rows = piped(capsys, "hits", "--pending", "--db", str(narrow_journal))
    expected_ids = [row[header.index("pay")] for row in rows]
    assert expected_ids == [f"{SHOE}/354/3/progressive", f"{SHOE}/353/1/progressive"]
    amounts = {row[header.index("amount")] for row in rows}
    assert len(max(amounts, key=len)) >= len("$1,234,567.89")  # a seven-figure jackpot
    shown = on_screen(columns, "hits", "--pending", "--db", str(narrow_journal))
    assert set(MONEY.findall(shown)) == amounts
    assert shown_ids(shown) == expected_ids
    pasted = shown_ids(shown)[0]
    status, out, err = run(
        capsys, "verify-hit", pasted, "--key", str(narrow_journal.parent / f"{SUPERVISOR}.key"),
        "--db", str(narrow_journal),
    )  # fmt: skip
    assert status == 0, err
    assert "journaled as row" in out
    left = piped(capsys, "hits", "--pending", "--db", str(narrow_journal))
    assert [row[0] for row in left[1:]] == expected_ids[1:]


@pytest.mark.parametrize("columns", WIDTHS)
def test_every_pay_the_meters_and_the_reconciliation_keep_their_amounts_and_ids_whole(
    narrow_journal: Path, columns: int, capsys: pytest.CaptureFixture[str]
) -> None:
    narrowest = columns == min(WIDTHS)
    for argv in (("hits", "--kind", "all"), ("report",), *((("meters",),) if narrowest else ())):
        header, *rows = piped(capsys, *argv, "--db", str(narrow_journal))
        shown = on_screen(columns, *argv, "--db", str(narrow_journal))
        figures = {token for row in rows for cell in row for token in MONEY.findall(cell)}
        assert figures, argv
        assert set(MONEY.findall(shown)) == figures, argv
        assert "P1-main-floor" in shown, argv  # the pool: a column's header, or a row's
        if header[0] == "pay":
            assert shown_ids(shown) == [row[0] for row in rows], argv
    if narrowest:
        shown = on_screen(columns, "operator", "list", "--db", str(narrow_journal))
        assert MANAGER in shown
        assert SUPERVISOR in shown


HOSTILE = "s\x1b[2J\x1b]0;pwned\x07"
"""A settlement id a hostile device sent: clear the screen, retitle the window (threat model)."""


@pytest.mark.parametrize("columns", [80, 200])
def test_a_device_id_with_terminal_controls_never_reaches_the_terminal_raw(
    tmp_path: Path, columns: int
) -> None:
    path = tmp_path / "journal.db"
    with opened_journal(path) as opened:
        assert opened.append(wager("w1", "r1", 1)).applied
        assert opened.append(settle(HOSTILE, "r1", {1: FIVE_ACES_RIG})).applied
    shown = on_screen(columns, "hits", "--pending", "--db", str(path))
    assert "\x1b]" not in shown  # the retitling never reached the terminal
    assert "\x07" not in shown
    replaced = "s\N{REPLACEMENT CHARACTER}[2J\N{REPLACEMENT CHARACTER}]0;pwned"
    assert shown_ids(shown) == [f"{replaced}\N{REPLACEMENT CHARACTER}/1/progressive"]
