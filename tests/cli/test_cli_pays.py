"""``jackpotd hits``: jackpots by default, any kind of pay on request (docs/operations.md, "Words").

A **pay** is any amount won on a wager; a **jackpot** is a pay from a pool's meter; a **hit** is
a jackpot won; **pending** is a pay awaiting a supervisor's verification. The command used to
list every progressive pay, the $4 full house with the five aces, as "hits". Now it lists
jackpots unless ``--kind`` says otherwise; ``--pending`` lists every pay awaiting verification
(what the pending alert counts), ``--since`` and ``--limit`` bound the list, ``--pool`` filters.

The journal (tests/support/journal/pay_history.py): round R1 deals five aces to seat 1 (a jackpot,
and a bonus pay, both pending), a full house to seat 2 (the progressive's fixed $4, a bonus pay) and
Envy to the others; round R2, a day later, a full house to seat 2 only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from support.cli.cli_runs import run
from support.journal.pay_history import pays_journal

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def pays_file(tmp_path: Path) -> Path:
    return pays_journal(tmp_path / "journal.db")


def pays(
    capsys: pytest.CaptureFixture[str], pays_file: Path, *argv: str
) -> list[dict[str, object]]:
    status, out, err = run(capsys, "hits", "--json", "--db", str(pays_file), *argv)
    assert status == 0, err
    document = json.loads(out)
    listed: list[dict[str, object]] = document["pays"]
    return listed


def ids(listed: list[dict[str, object]]) -> list[str]:
    return [str(pay["payout_id"]) for pay in listed]


def test_hits_lists_jackpots_only_never_a_fixed_progressive_pay(
    pays_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = pays(capsys, pays_file)
    assert ids(listed) == ["R1/1/progressive"]
    (jackpot,) = listed
    assert jackpot["what"] == "jackpot"
    assert jackpot["from_meter_cents"] == jackpot["win_cents"] == 100_008  # 10 % of $10,000.84
    assert jackpot["status"] == "pending"


def test_kind_chooses_which_pays(pays_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    progressive = pays(capsys, pays_file, "--kind", "progressive")
    # Newest round first; within a round, by seat.
    assert ids(progressive) == ["R2/2/progressive", "R1/1/progressive", "R1/2/progressive"]
    assert [pay["win_cents"] for pay in progressive] == [400, 100_008, 400]
    assert [pay["what"] for pay in progressive] == ["progressive", "jackpot", "progressive"]
    bonus = pays(capsys, pays_file, "--kind", "bonus")
    assert ids(bonus) == ["R2/2/bonus", "R1/1/bonus", "R1/2/bonus"]
    assert [pay["win_cents"] for pay in bonus] == [2_500, 125_000, 2_500]
    envy = pays(capsys, pays_file, "--kind", "envy")
    assert envy  # the five aces earn Envy for the other seats with a qualifying wager
    assert {pay["what"] for pay in envy} == {"envy"}
    assert all(pay["seat"] != 1 for pay in envy)  # never for one's own hand
    everything = pays(capsys, pays_file, "--kind", "all")
    assert sorted(ids(everything)) == sorted(ids(progressive) + ids(bonus) + ids(envy))
    assert all(int(str(pay["win_cents"])) > 0 for pay in everything)  # losses are no pays
    for kind in ("ace-high", "insurance", "dynasty"):  # the table offers none of them
        assert pays(capsys, pays_file, "--kind", kind) == []


def test_pending_lists_every_pay_awaiting_verification(
    pays_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pending = pays(capsys, pays_file, "--pending")
    assert ids(pending) == ["R1/1/bonus", "R1/1/progressive"]
    assert {pay["status"] for pay in pending} == {"pending"}
    assert ids(pays(capsys, pays_file, "--pending", "--kind", "jackpot")) == ["R1/1/progressive"]


def test_since_limit_and_pool_bound_the_list(
    pays_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ids(pays(capsys, pays_file, "--kind", "all", "--since", "2026-11-30")) == [
        "R2/2/bonus",
        "R2/2/progressive",
    ]
    assert ids(pays(capsys, pays_file, "--kind", "progressive", "--limit", "1")) == [
        "R2/2/progressive"
    ]
    assert ids(pays(capsys, pays_file, "--pool", "P1")) == ["R1/1/progressive"]
    assert pays(capsys, pays_file, "--pool", "P1", "--since", "2026-11-30") == []  # none since


def test_an_unknown_pool_is_named_not_listed_as_no_jackpots(
    pays_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (("--pool", "nosuchpool"), ("--pool", "nosuchpool", "--json")):
        status, out, err = run(capsys, "hits", *argv, "--db", str(pays_file))
        assert (status, out) == (1, "")
        assert err == "jackpotd: --pool: no pool 'nosuchpool' in this journal; its pools: P1\n"
    status, _, err = run(capsys, "hits", "--since", "last week", "--db", str(pays_file))
    assert (status, err) == (
        1,
        "jackpotd: --since: 'last week' is not an ISO date or time like 2026-11-29T18:00Z\n",
    )


def test_the_words_are_in_the_help_and_the_output(
    pays_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "hits", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "jackpots (pays from a pool's meter)" in help_text
    assert "{jackpot,progressive,bonus,ace-high,insurance,dynasty,envy,all}" in help_text
    status, out, _ = run(capsys, "hits", "--db", str(pays_file), "--kind", "all")
    assert status == 0
    header, *rows = out.splitlines()
    assert header.split("\t") == [
        "pay", "time", "table", "seat", "what", "line", "amount", "status", "pool", "tax",
    ]  # fmt: skip
    assert len(rows) == len(pays(capsys, pays_file, "--kind", "all"))
    status, out, _ = run(capsys, "hits", "--db", str(pays_file), "--kind", "ace-high")
    assert out == "no ace-high pays\n"
    status, out, _ = run(capsys, "meters", "--db", str(pays_file))
    assert "hits (jackpots won)" in out
