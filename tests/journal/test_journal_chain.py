"""The hash chain's bytes do not depend on which JSON encoder writes them (docs/journal.md).

A journal row's hash covers the compact JSON of its fields. Rows written by earlier versions
of the controller were hashed over ``json.dumps(fields, ensure_ascii=False,
separators=(",", ":"))``; :func:`controller.journal.chain.row_hash` now writes that JSON with
msgspec. If the two ever differed for some text, every old journal holding such a text would
stop verifying. These tests prove they agree on any text and any sequence number.
"""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal.chain import GENESIS, HASHED_FIELDS, row_hash

TEXT_FIELDS = HASHED_FIELDS[1:]


def stdlib_row_hash(previous: str, row: dict[str, object]) -> str:
    """The chain as the first versions of the controller computed it."""
    body = json.dumps(
        [row[name] for name in HASHED_FIELDS], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(f"{previous}\n{body}".encode()).hexdigest()


rows = st.fixed_dictionaries(
    {"seq": st.integers(min_value=1, max_value=2**63 - 1)}
    | {name: st.text() for name in TEXT_FIELDS}
)


@settings(max_examples=2_000)
@given(previous=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64), row=rows)
def test_journal_chain_row_hash_is_the_hash_the_stdlib_json_gave_for_any_text(
    previous: str, row: dict[str, object]
) -> None:
    assert row_hash(previous, row) == stdlib_row_hash(previous, row)


def test_journal_chain_row_hash_agrees_on_every_escape_json_knows() -> None:
    every_escape = "".join(chr(code) for code in range(0x80)) + "\u2028\u2029\u00e9\U0001f0a1"
    row: dict[str, object] = {"seq": 1} | dict.fromkeys(TEXT_FIELDS, every_escape)
    assert row_hash(GENESIS, row) == stdlib_row_hash(GENESIS, row)
