"""``jackpotd report`` lists each mystery level's draws, commitments and reveals, each checked.

docs/operations.md, "Mystery levels in the report"; docs/rules.md § 10. On a real journal whose
grand (tests/support/rules/mystery_paytable.py) hit twice, the keeper drawing and answering as the
daemon asks it: every draw is listed with its row, its time, the level's range and its
commitment; every reveal with its trigger, its nonce, the row of the wager that hit and
``checks``; the open draw with its commitment only, its trigger and nonce (which the keeper
holds) nowhere in the report. The JSON is held to what was journaled, field for field. A
period is a run of rows: a draw revealed before it is not listed, one revealed after its close
is open in it. Every level balances, to the fraction of a cent, with what each hit moved past
its trigger (onto the major, or onto the grand's own overflow) as a flow of its own. A journal
without a mystery level reports as it always did.
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from support.cli.cli_runs import run
from support.cli.terminal import on_a_terminal
from support.journal.mystery_journal import GRAND, TABLE, MysteryJournal, mystery_journal

from controller.cli.times import local_time
from controller.effects import fraction_text as text
from controller.money import format_cents

if TYPE_CHECKING:
    from pathlib import Path

    from controller.mystery.core import Sealed


@pytest.fixture
def grand(tmp_path: Path) -> MysteryJournal:
    """Two hits of the grand, and its third draw open."""
    floor_ = mystery_journal(tmp_path / "journal.db")
    floor_.draw()
    floor_.until_hits(2)
    floor_.journal.close()
    assert len(floor_.draws) == 3
    return floor_


def sealed(floor_: MysteryJournal) -> Sealed:
    """The open draw as its keeper holds it: the trigger and nonce the report must not show."""
    (held,) = floor_.keeper.vault.sealed.values()
    assert held.hit is None
    assert held.drawn == floor_.draws[-1][1]
    return held


def hit_row(floor_: MysteryJournal, revealed_at: int) -> int:
    """The row of the wager the keeper was asked about last before its reveal at ``revealed_at``."""
    return max(row.seq for row, _ in floor_.wagers if row.seq < revealed_at)


def expected_levels(floor_: MysteryJournal, upto: int | None = None) -> list[dict[str, Any]]:
    """The JSON's ``mystery_levels`` as the journaled draws and reveals say (``upto``: a row)."""
    reveals = {reveal.draw: (row, reveal) for row, reveal in floor_.reveals}
    draws = []
    for row, drawn in floor_.draws:
        revealed = None
        if drawn.draw in reveals and (upto is None or reveals[drawn.draw][0].seq <= upto):
            at, reveal = reveals[drawn.draw]
            wager_seq = hit_row(floor_, at.seq)
            round_id = next(round_id for wager, round_id in floor_.wagers if wager.seq == wager_seq)
            revealed = {
                "seq": at.seq, "at": at.at, "trigger_cents": reveal.trigger,
                "nonce": reveal.nonce, "hit_meter": str(reveal.hit.cents),
                "hit": {"seq": wager_seq, "table": TABLE, "round": round_id, "seat": 1},
                "paid_cents": reveal.trigger, "checks": True, "problem": None,
            }  # fmt: skip
        draws.append({
            "draw": drawn.draw, "seq": row.seq, "at": row.at, "floor_cents": 1_000,
            "ceiling_cents": 1_200, "commitment": drawn.commitment, "revealed": revealed,
        })  # fmt: skip
    return [{"level": GRAND, "draws": draws}]


def report(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> tuple[str, str]:
    status, out, err = run(capsys, "report", "--db", str(path), *argv)
    assert "mystery reveal does not check" not in err
    assert status == 0, err  # every pool balances, every reveal checks
    return out, err


def piped(out: str) -> list[list[str]]:
    return [line.split("\t") for line in out.splitlines() if "\t" in line]


@pytest.mark.usefixtures("zone")
def test_the_report_lists_each_draw_its_commitment_and_each_reveal_checked(
    grand: MysteryJournal, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = report(capsys, grand.path)
    rows = piped(out)
    assert "Mystery levels (docs/rules.md § 10)" in out
    revealed = {reveal.draw: row.seq for row, reveal in grand.reveals}
    for row, drawn in grand.draws:
        state = f"at row {revealed[drawn.draw]}" if drawn.draw in revealed else "not yet: sealed"
        assert [
            GRAND, str(drawn.draw), str(row.seq), local_time(row.at), "$10.00", "$12.00",
            drawn.commitment, state,
        ] in rows  # fmt: skip
    for row, reveal in grand.reveals:
        assert [
            GRAND, str(reveal.draw), str(row.seq), local_time(row.at),
            format_cents(reveal.trigger), reveal.nonce, str(hit_row(grand, row.seq)), TABLE,
            "1", format_cents(reveal.trigger), "checks",
        ] in rows  # fmt: skip
    reveal_lines = [line for line in rows if line[0] == GRAND and line[-1] == "checks"]
    assert [line[1] for line in reveal_lines] == ["1", "2"]  # the open draw has no reveal line
    assert sealed(grand).nonce not in out


def test_the_json_gives_every_draw_and_reveal_exactly_and_no_sealed_trigger(
    grand: MysteryJournal, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = report(capsys, grand.path, "--json")
    document = json.loads(out)
    assert list(document) == [
        "from", "to", "rows", "provenance", "pools", "mystery_levels", "balanced",
    ]  # fmt: skip
    assert document["mystery_levels"] == expected_levels(grand)
    (level,) = document["mystery_levels"]
    assert level["draws"][-1]["revealed"] is None
    held = sealed(grand)
    assert held.nonce not in out
    assert "trigger" not in json.dumps(level["draws"][-1])


def test_a_period_lists_the_draws_open_in_it_as_they_were_at_its_close(
    grand: MysteryJournal, capsys: pytest.CaptureFixture[str]
) -> None:
    (first, _), (second, second_reveal) = grand.reveals
    # From the second draw's row: the first draw was spent before the period opened.
    since = grand.draws[1][0]
    out, _ = report(capsys, grand.path, "--json", "--from", since.at)
    (level,) = json.loads(out)["mystery_levels"]
    assert level["draws"] == expected_levels(grand)[0]["draws"][1:]
    # To just before the second reveal: the second draw was still sealed at the close.
    before = second.seq - 1
    until = next(row.at for row, _ in grand.wagers if row.seq == before)
    out, _ = report(capsys, grand.path, "--json", "--to", until)
    (level,) = json.loads(out)["mystery_levels"]
    assert level["draws"] == expected_levels(grand, upto=before)[0]["draws"][:2]
    assert level["draws"][0]["revealed"]["seq"] == first.seq
    assert level["draws"][1]["revealed"] is None
    assert second_reveal.nonce not in out
    out, _ = report(capsys, grand.path, "--to", until)
    assert second_reveal.nonce not in out
    assert "not yet: sealed" in out


def test_the_commitments_and_nonces_are_shown_whole_on_an_80_column_terminal(
    grand: MysteryJournal,
) -> None:
    status, shown, _ = on_a_terminal(
        "report", "--db", str(grand.path), stdout_too=True, columns=80, env={"TZ": "UTC"}
    )
    assert "mystery reveal does not check" not in shown, shown
    assert status == 0, shown
    for _, drawn in grand.draws:
        assert drawn.commitment in shown
    for _, reveal in grand.reveals:
        assert reveal.nonce in shown
    assert sealed(grand).nonce not in shown


def test_a_journal_without_a_mystery_level_reports_as_it_did(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "report", "--db", str(played), "--json")
    assert status == 0, err
    assert list(json.loads(out)) == ["from", "to", "rows", "provenance", "pools", "balanced"]
    status, out, err = run(capsys, "report", "--db", str(played))
    assert status == 0, err
    assert "Mystery" not in out


@pytest.mark.parametrize(("spill_to", "onto"), [("stax.major", "stax.major"), ("", GRAND)])
@pytest.mark.usefixtures("zone")
def test_every_level_balances_with_what_the_hits_moved_past_their_triggers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spill_to: str, onto: str
) -> None:
    """docs/money.md, "Mystery levels": the amount past a trigger is a flow of the report's own."""
    floor_ = mystery_journal(tmp_path / "journal.db", spill_to)
    floor_.draw()
    floor_.until_hits(3)
    state = floor_.journal.state.pools
    past = state[GRAND].spilled_out if spill_to else state[GRAND].overflow
    assert past > 0
    floor_.journal.close()
    out, _ = report(capsys, floor_.path, "--json")
    document = json.loads(out)
    assert document["balanced"] is True
    moved = {pool["pool"]: pool["past_triggers"] for pool in document["pools"]}
    grand_overflow = "0" if spill_to else text(past)
    assert moved[GRAND] == {"meter": text(-past), "reserve": "0", "overflow": grand_overflow}
    if spill_to:
        assert moved[onto] == {"meter": text(past), "reserve": "0", "overflow": "0"}
    assert all(
        value == "0" for pool, flows in moved.items() if pool not in {GRAND, onto}
        for value in flows.values()
    )  # fmt: skip
    out, _ = report(capsys, floor_.path)
    rows = piped(out)
    header = next(line for line in rows if line[:2] == ["pool", "account"])
    assert "past trigger" in header
    column = header.index("past trigger")
    grand_meter = next(line for line in rows if line[:2] == [GRAND, "meter"])
    assert grand_meter[column] == format_cents(int(-past))  # whole cents, as each flow
    assert grand_meter[-1] == "yes"


def test_the_pdf_lists_each_draw_and_reveal_and_no_sealed_trigger(
    grand: MysteryJournal, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """docs/operations.md, "The reports as a PDF": the mystery part is in the PDF too."""
    pdf = tmp_path / "mystery.pdf"
    status, out, err = run(capsys, "report", "pdf", "--db", str(grand.path), "--out", str(pdf))
    assert status == 0, err
    assert "pages" in out
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "Mystery levels (docs/rules.md § 10)" in text
    for _, drawn in grand.draws:
        assert drawn.commitment in text
    for _, reveal in grand.reveals:
        assert reveal.nonce in text
        assert format_cents(reveal.trigger) in text
    assert text.count("checks") >= len(grand.reveals)
    assert sealed(grand).nonce not in text
