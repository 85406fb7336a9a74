"""A serial line's refusal reasons are a closed list (drivers/serial/refusals.py).

The metrics show each reason at 0 from the start, per port (docs/metrics.md): a reason outside
the list would appear as a new series. Any bytes on the line and any payload in a good frame
must be refused, if at all, with a listed reason.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivers.serial.framing import FrameError, FrameReader
from drivers.serial.protocol import ProtocolError, decode_payload
from drivers.serial.refusals import REFUSALS

TYPES = st.sampled_from(["BET", "LOCK", "CARD", "DONE", "VOID", "HB", "ACK", "X", ""])
FIELD = st.text(alphabet="0123456789AsTdJkjbonus-,.x ", max_size=8)


@given(st.lists(st.binary(max_size=40), max_size=6))
def test_any_bytes_on_the_line_are_framed_or_refused_with_a_listed_reason(
    chunks: list[bytes],
) -> None:
    reader = FrameReader()
    for chunk in (*chunks, b"\r\n"):
        for item in reader.feed(chunk):
            if isinstance(item, FrameError):
                assert item.reason in REFUSALS


@given(TYPES, st.lists(FIELD, max_size=7))
def test_any_payload_is_decoded_or_refused_with_a_listed_reason(
    kind: str, fields: list[str]
) -> None:
    assert refusal(",".join([kind, *fields])) in {None, *REFUSALS}


@given(st.text(max_size=60))
def test_any_text_is_decoded_or_refused_with_a_listed_reason(payload: str) -> None:
    assert refusal(payload) in {None, *REFUSALS}


def refusal(payload: str) -> str | None:
    """The reason a payload from a table's device is refused with; None when it decodes."""
    try:
        decode_payload(payload, "t1")
    except ProtocolError as error:
        return error.reason
    return None
