"""The ledger's rule: identifiers and reasons carry no control or format character.

docs/security.md, "Identifiers are one line of text": an operator, a table, a pool, a round, a
pay, a table agent's key or a reason is shown on terminals and in reports and pasted into the
next command, so a character of the Unicode categories Cc, Cf, Zl or Zp in any of them refuses
the event (controller/ledger/identifiers.py, on the one check of controller/text.py the MQTT
wire uses too). Every kind of event that names one is tried here, nested parts included (a
signer's name, a table agent's signature, a change inside a configuration approval); text
with accents, spaces and other scripts is taken.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from controller.agent_events import AgentSignature, TableAgentEnrolled
from controller.event_base import Signature
from controller.events import (
    AnyEvent,
    BetSensed,
    ConfigurationApproved,
    FaultRecorded,
    HitVerified,
    MeterAdjusted,
    OperatorEnrolled,
    OperatorRevoked,
    PoolOpened,
    RoundSettled,
    TableConfigured,
    TableStatusChanged,
)
from controller.ledger.identifiers import check_identifiers, identifier_refusal
from controller.ledger.state import LedgerError
from controller.text import control_character
from controller.wide_events import SiteLinked

AT = "2026-12-01T15:00:00Z"
HOSTILE = {
    "newline": "\n",
    "carriage return": "\r",
    "tab": "\t",
    "NUL": "\x00",
    "ESC": "\x1b",
    "DEL": "\x7f",
    "NEL (C1)": "\x85",
    "right-to-left override": "\u202e",
    "left-to-right isolate": "\u2066",
    "right-to-left mark": "\u200f",
    "zero-width joiner": "\u200d",
    "byte-order mark": "\ufeff",
    "soft hyphen": "\u00ad",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
}


def events_naming(text: str) -> dict[str, AnyEvent]:
    """One event per place an identifier or a reason sits, each carrying ``text`` there."""
    signed = [Signature("sup1", "c2ln"), Signature(text, "c2ln")]
    return {
        "operator id": OperatorEnrolled("e1", AT, text, "supervisor", "", "", "ed25519", "mgr"),
        "operator id (by)": OperatorRevoked("e1", AT, "sup1", text, "left the company"),
        "operator id (a signer)": HitVerified("e1", AT, "T1/r1/1/progressive", "sup1", signed),
        "table id": TableStatusChanged("e1", AT, text, online=False, reason="mqtt status"),
        "pool id": MeterAdjusted("e1", AT, text, "reserve", 100, "sup1", "count"),
        "reason": MeterAdjusted("e1", AT, "P1", "reserve", 100, "sup1", f"count{text}forged"),
        "payout id": HitVerified("e1", AT, f"T1/r{text}1/1/progressive", "sup1"),
        "round id (a pay's id)": RoundSettled("e1", AT, "T1", text, [], {}),
        "event id (a pay's id)": RoundSettled(f"s{text}", AT, "T1", "r1", [], {}),
        "table agent id": TableAgentEnrolled("e1", AT, "T1", "a2V5", text, "mgr"),
        "table agent id (its signature)": BetSensed(
            "T1/bs/1",
            AT,
            "T1",
            "bs",
            1,
            1,
            "progressive",
            present=True,
            agent_signature=AgentSignature(text, AT, "c2ln"),
        ),
        "device id": BetSensed("T1/bs/1", AT, "T1", text, 1, 1, "progressive", present=True),
        "pool id (inside an approval)": ConfigurationApproved(
            "e1",
            AT,
            "0" * 64,
            [PoolOpened("p", AT, f"P{text}", "progressive-4", 1_000_000, Decimal("0.01"))],
            "mgr",
        ),
        "table id (inside an approval)": ConfigurationApproved(
            "e1", AT, "0" * 64, [TableConfigured("t", AT, text, {"bonus": "fortune-1"})], "mgr"
        ),
        "pool id (a site's)": SiteLinked("e1", AT, "s1", "a2V5", ["P1", text], "mgr"),
    }


@pytest.mark.parametrize("char", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("place", events_naming("").keys())
def test_a_control_or_format_character_in_any_identifier_or_reason_is_refused(
    place: str, char: str
) -> None:
    event = events_naming(char)[place]
    why = identifier_refusal(event)
    assert why is not None, place
    assert "carries the control character U+" in why
    assert char not in why  # the refusal itself is one inert line, the text quoted escaped
    with pytest.raises(LedgerError, match="an identifier or a reason is one line of text"):
        check_identifiers(event)


@pytest.mark.parametrize("place", events_naming("").keys())
def test_names_with_accents_spaces_and_other_scripts_are_text(place: str) -> None:
    for text in (
        "Zoë Müller",
        "Table 7 (high limit)",
        "王小明",
        "Jos\u00e9\u00a0Ram\u00edrez",
        "sup-1_a.b",
    ):
        assert identifier_refusal(events_naming(text)[place]) is None, (place, text)


def test_the_refusal_names_the_field_and_the_character() -> None:
    event = OperatorEnrolled("e1", AT, "sup1\x1b]0;pwned\x07", "supervisor", "", "", "x", "mgr")
    why = identifier_refusal(event)
    assert why is not None
    assert why.startswith("operator id 'sup1\\x1b]0;pwned\\x07' carries the control character")
    assert "U+001B" in why
    bidi = identifier_refusal(TableStatusChanged("e1", AT, "T1\u202e", online=True, reason="x"))
    assert bidi is not None
    assert "table id 'T1\\u202e'" in bidi
    assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in bidi


def test_the_journals_own_fault_rows_quote_what_was_refused_and_are_not_refused() -> None:
    fault = FaultRecorded("T1/bs/1#bad", AT, "table T1", "undecodable", "sent: 'a\\nb'\n")
    assert identifier_refusal(fault) is None


def test_the_categories_refused_are_cc_cf_zl_zp_and_nothing_printable() -> None:
    assert {control_character(char) for char in HOSTILE.values()} == set(HOSTILE.values())
    for text in ("", "plain", "a b", "\u00a0", "\u3000", "emoji \U0001f0a1", "\U000e0000x"):
        # Unassigned code points and spaces are not control or format characters.
        assert control_character(text) is None, repr(text)
