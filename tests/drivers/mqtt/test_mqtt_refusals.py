"""The MQTT source's refusal reasons are a closed list (drivers/mqtt/refusals.py).

The metrics show each reason at 0 from the start (docs/metrics.md), so a reason outside the
list would appear as a new series that an ``increase()`` alert misses on its first occurrence.
Hostile payloads of every shape must be refused with a listed reason, and every reason the
docs name must be listed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import decode_status, decode_table_event
from drivers.mqtt.refusals import REFUSALS
from drivers.mqtt.topics import EVENT_TYPES, TopicError, Topics

DOCS = Path(__file__).parents[3] / "docs" / "mqtt.md"
TOPICS = Topics("riverside")
FIELDS = ("v", "device", "seq", "seat", "spot", "present", "amount_cents", "round", "position",
          "card", "reason", "last", "other")  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def refusal(decode: Any, *arguments: Any) -> str | None:
    """The reason ``decode`` refuses with; None when it accepts."""
    try:
        decode(*arguments)
    except (PayloadError, TopicError) as error:
        return error.reason
    return None


@given(st.sampled_from(sorted(EVENT_TYPES)), st.binary(max_size=64))
def test_any_bytes_are_accepted_or_refused_with_a_listed_reason(kind: str, data: bytes) -> None:
    assert refusal(decode_table_event, "t1", kind, data) in {None, *REFUSALS}
    assert refusal(decode_status, data) in {None, *REFUSALS}


@given(
    st.sampled_from([*sorted(EVENT_TYPES), "bogus"]),
    st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=len(FIELDS)),
)
def test_any_json_object_is_accepted_or_refused_with_a_listed_reason(
    kind: str, fields: dict[str, Any]
) -> None:
    data = json.dumps(fields).encode()
    assert refusal(decode_table_event, "t1", kind, data) in {None, *REFUSALS}


@given(st.text(max_size=40))
def test_any_topic_is_parsed_or_refused_with_a_listed_reason(level: str) -> None:
    for topic in (f"table/{level}/event/bet", f"table/{level}/status", level):
        assert refusal(TOPICS.parse, TOPICS.prefix + topic) in {None, *REFUSALS}


def test_every_reason_the_docs_name_is_listed() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Rejected input", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([a-z-]+)`(?:, `([a-z-]+)`)?", section, re.MULTILINE))
    tokens = {token for pair in named for token in pair if token}
    assert tokens
    assert tokens <= set(REFUSALS)
    assert "bad-amount-cents" in REFUSALS  # a payload field's own token (`bad-<field>`)
