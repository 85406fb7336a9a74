"""``jackpotd report`` says who wrote the period's rows and what each table's agent signed.

docs/journal.md, "Provenance"; docs/ha.md, "Signed forwarding". On a signed journal with an
identity, T1's agent is enrolled and forwards its bet sensor's events signed, one forgery on
T1's topic is refused for its signature, and T2 (no agent enrolled) is heard through the
broker unsigned. ``jackpotd report`` prints the period's writers (as ``jackpotd verify`` names
them) and, per table, the device events, how many its agent signed, the share and the
refusals (the forgery's); ``--json`` gives the same counts exactly. On a real pseudo-terminal
80 columns wide every count, every id and every amount of the report is shown whole, as the
pipe gets them.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.cli.cli_runs import run
from support.cli.terminal import on_a_terminal
from support.journal.journal_rig import TABLE, pool_opened, table_configured
from support.ledger.approvals import Site, now

from controller.agent_events import TableAgentEnrolled
from controller.events import BetSensed, ConfigurationApproved, device_event_id
from controller.ledger_journal.sqlite import Journal
from controller.security.agent_key import AgentKey

if TYPE_CHECKING:
    from pathlib import Path

OTHER = "T2"
AGENT = f"agent table={TABLE} boot=b-1"
BROKER = f"mqtt client=table-{OTHER} topic=site/table/{OTHER}/event/bet"


def bet(table_id: str, seq: int, seat: int) -> BetSensed:
    return BetSensed(
        device_event_id(table_id, "bs-1", seq), now(), table_id, "bs-1", seq,
        seat=seat, spot="progressive", present=True, amount_cents=100,
    )  # fmt: skip


@pytest.fixture
def provenance_journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    with Journal(path) as opened:
        site = Site.create(opened)
        tables = [
            msgspec.structs.replace(
                table_configured(f"t-{table}", table), envy_includes_dealer=False
            )
            for table in (TABLE, OTHER)
        ]
        approval = ConfigurationApproved(
            "approval-1",
            now(),
            "digest-1",
            [pool_opened(), *tables],
            "mgr",
        )
        site.append(site.sign(approval, "mgr"))
        key = AgentKey.generate(TABLE)
        enrolled = TableAgentEnrolled(
            f"agent-{uuid.uuid4()}", now(), TABLE, key.public_key, key.key_id, "mgr"
        )
        site.append(site.sign(enrolled, "mgr"))
        for seq in (1, 2, 3):
            event = bet(TABLE, seq, seq)
            signature = key.signer().signature(event, event.at)
            event = msgspec.structs.replace(event, agent_signature=signature)
            assert opened.append(event, provenance=AGENT).applied
        forged = opened.append(bet(TABLE, 4, 4), provenance=f"mqtt client=x topic=t/{TABLE}")
        assert not forged.applied  # unsigned on an enrolled table: an agent-signature fault
        for seq in (1, 2):
            assert opened.append(bet(OTHER, seq, seq), provenance=BROKER).applied
    return path


def test_report_counts_the_writers_and_each_tables_agent_signed_share(
    provenance_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "report", "--json", "--db", str(provenance_journal))
    assert status == 0, err
    found = json.loads(out)["provenance"]
    assert found["writers"]["agent"] == 3
    assert found["writers"]["mqtt"] == 3  # T2's two bets and the forgery's fault row
    assert found["tables"] == {
        TABLE: {"device_events": 3, "agent_signed": 3, "refused_for_the_signature": 1},
        OTHER: {"device_events": 2, "agent_signed": 0, "refused_for_the_signature": 0},
    }
    status, out, err = run(capsys, "report", "--db", str(provenance_journal))
    assert status == 0, err
    piped = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert ["agent", "3"] in piped
    assert [TABLE, "3", "3", "100.0%", "1"] in piped
    assert [OTHER, "2", "0", "0.0%", "0"] in piped


def test_the_report_with_its_provenance_prints_whole_at_80_columns(
    provenance_journal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "report", "--db", str(provenance_journal))
    assert status == 0, err
    cells = {cell for line in out.splitlines() if "\t" in line for cell in line.split("\t")}
    status, shown, _ = on_a_terminal(
        "report", "--db", str(provenance_journal), stdout_too=True, columns=80, env={"TZ": "UTC"}
    )
    assert status == 0, shown
    assert "…" not in shown
    provenance = shown[shown.index("Who wrote the rows") :]
    assert all(len(line) <= 80 for line in provenance.splitlines()), provenance
    for cell in cells:
        if any(char.isdigit() for char in cell) or cell in (TABLE, OTHER, "agent", "mqtt"):
            assert cell in shown, (cell, shown)  # money, counts and ids whole
    assert "Who wrote the rows" in shown
    assert "signed by the table's agent or refused" in shown
