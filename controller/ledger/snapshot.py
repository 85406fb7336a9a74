"""The whole ledger state as one canonical document: what a checkpoint signs and start-up replays.

A **snapshot** is every part of :class:`~controller.ledger.apply.LedgerState` written as canonical
JSON (keys sorted, no spaces, exact amounts as fraction text): pools, tables (the
``table-configured`` event each was set by; the rules are rebuilt from it), the live table
states, the open rounds with their locked wagers, the payouts awaiting verification, the
operators, the approved manifest, the configuration revision and the authority settings. Its
**digest** is the SHA-256 of that text; a checkpoint signs it
(:mod:`controller.journal.checkpoints`), and start-up restores the state from the last
checkpoint's snapshot and replays the rows after it (:mod:`controller.journal.state_trust`).

The parts reuse the encodings of the materialized rows (:mod:`controller.ledger.codec`);
operators, payouts, the manifest and the authority settings are plain dataclasses, written
field by field with msgspec, so that a field added to them is carried without a change here.
A field added to the state itself must be added here: the snapshot tests name any field left
out (``tests/journal/test_journal_snapshot.py``).

:func:`differences` compares two states part by part and names each value that differs, as
``pools/P1: meter 250000000 in the table, 123456 by the journal``.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Final

import msgspec

from controller.events import TableConfigured, encode_event
from controller.ledger.codec import (
    binding_from_json,
    binding_json,
    pool_from_json,
    pool_json,
    table_state_from_json,
    table_state_json,
    wagers_from_json,
    wagers_json,
)
from controller.ledger.operators import Authority, Operator
from controller.ledger.settlement import Payout
from controller.ledger.state import LedgerState
from controller.ledger.table_rules import table_rules
from controller.ledger.wide_area.sites import LinkedSite, SiteChain
from controller.security.manifest import ApprovedManifest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.ledger.journal_binding import JournalBinding

VERSION: Final = 1
PARTS: Final = (
    "pools", "table_events", "table_states", "rounds", "pending", "operators", "manifest",
    "revision", "authority", "sites", "chain", "binding",
)  # fmt: skip
"""The state's fields a snapshot holds, in the order :func:`differences` reports them."""
DERIVED: Final = frozenset({"tables"})
"""The state's fields rebuilt from others (each table's rules, from its configuration)."""

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")
_SHOWN: Final = 80
"""Characters of a differing value a difference quotes."""


def _document(text: str | bytes) -> Any:  # noqa: ANN401 - a JSON document
    return json.loads(text)


def state_document(state: LedgerState) -> dict[str, Any]:
    """The state as a JSON-ready document (see the module docstring)."""
    rounds: dict[str, dict[str, Any]] = {}
    for (table_id, round_id), wagers in sorted(state.rounds.items()):
        rounds.setdefault(table_id, {})[round_id] = _document(wagers_json(wagers))
    return {
        "v": VERSION,
        "pools": {key: _document(pool_json(pool)) for key, pool in state.pools.items()},
        "table_events": {
            key: _document(encode_event(event)) for key, event in state.table_events.items()
        },
        "table_states": {
            key: _document(table_state_json(live)) for key, live in state.table_states.items()
        },
        "rounds": rounds,
        "pending": {key: msgspec.to_builtins(payout) for key, payout in state.pending.items()},
        "operators": {key: msgspec.to_builtins(op) for key, op in state.operators.items()},
        "manifest": msgspec.to_builtins(state.manifest),
        "revision": state.revision,
        "authority": msgspec.to_builtins(state.authority),
        # Only when there are any: a snapshot without linked properties is the text (and the
        # digest, which checkpoints sign) it was before wide-area links existed.
        **({"sites": _sites_document(state)} if state.sites else {}),
        **({"chain": msgspec.to_builtins(state.chain)} if state.chain is not None else {}),
        # Likewise the journal's identity and the signed events it applied: only on journals
        # that have one (controller/ledger/binding.py), so older snapshots read as they were.
        **({"binding": _document(binding_json(state.binding))} if state.binding else {}),
    }


def _sites_document(state: LedgerState) -> dict[str, Any]:
    """Central's linked properties; a link never resumed without its ``resumed`` (see SiteLink)."""
    sites: dict[str, Any] = msgspec.to_builtins(dict(state.sites))
    for linked in sites.values():
        if linked["link"].get("resumed") == 0:
            del linked["link"]["resumed"]
    return sites


def snapshot_text(state: LedgerState) -> str:
    """The canonical text of the state's snapshot."""
    return _CANONICAL.encode(state_document(state)).decode()


def digest(text: str) -> str:
    """The SHA-256 (hex) of a snapshot's text: what a checkpoint signs."""
    return hashlib.sha256(text.encode()).hexdigest()


def state_digest(state: LedgerState) -> str:
    """The digest of the state's snapshot."""
    return digest(snapshot_text(state))


def _reencoded(document: Any) -> str:  # noqa: ANN401 - a JSON document
    return _CANONICAL.encode(document).decode()


def state_from_text(text: str) -> LedgerState:
    """The inverse of :func:`snapshot_text`; raises ValueError on a text it cannot read."""
    try:
        document = json.loads(text)
        if document.get("v") != VERSION:
            raise ValueError(f"snapshot version {document.get('v')!r}, not {VERSION}")
        events = {
            key: msgspec.json.decode(_reencoded(value), type=TableConfigured)
            for key, value in document["table_events"].items()
        }
        manifest = document["manifest"]
        return LedgerState(
            pools={k: pool_from_json(_reencoded(v)) for k, v in document["pools"].items()},
            tables={key: table_rules(event) for key, event in events.items()},
            table_events=events,
            table_states={
                k: table_state_from_json(_reencoded(v)) for k, v in document["table_states"].items()
            },
            rounds={
                (table_id, round_id): wagers_from_json(_reencoded(wagers))
                for table_id, rounds in document["rounds"].items()
                for round_id, wagers in rounds.items()
            },
            pending={k: msgspec.convert(v, Payout) for k, v in document["pending"].items()},
            operators={k: msgspec.convert(v, Operator) for k, v in document["operators"].items()},
            manifest=None if manifest is None else msgspec.convert(manifest, ApprovedManifest),
            revision=int(document["revision"]),
            authority=msgspec.convert(document["authority"], Authority),
            sites=msgspec.convert(document.get("sites", {}), dict[str, LinkedSite]),
            chain=_chain(document.get("chain")),
            binding=_binding(document.get("binding")),
        )
    except (KeyError, TypeError, AttributeError, msgspec.MsgspecError) as error:
        raise ValueError(f"the snapshot cannot be read: {error!r}") from error


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."


def _leaves(value: object, path: str = "") -> Iterator[tuple[str, object]]:
    """Each leaf of a document with its dotted path (lists are leaves)."""
    if isinstance(value, dict) and value:
        for key in sorted(value):
            yield from _leaves(value[key], f"{path}.{key}" if path else str(key))
    else:
        yield path, value


def _entry_differences(where: str, stored: object, replayed: object) -> Iterator[str]:
    """``where: field X in the table, Y by the journal`` for each differing leaf."""
    ours, theirs = dict(_leaves(stored)), dict(_leaves(replayed))
    for name in sorted(ours.keys() | theirs.keys()):
        if ours.get(name, "(none)") != theirs.get(name, "(none)"):
            label = f"{name} " if name else ""
            yield (
                f"{where}: {label}{_shown(ours.get(name, '(none)'))} in the table, "
                f"{_shown(theirs.get(name, '(none)'))} by the journal"
            )


def _keyed_differences(
    part: str, stored: dict[str, Any], replayed: dict[str, Any]
) -> Iterator[str]:
    for key in sorted(stored.keys() | replayed.keys()):
        where = f"{part}/{key}"
        if key not in replayed:
            yield f"{where}: in the table, not by the journal"
        elif key not in stored:
            yield f"{where}: by the journal, not in the table"
        elif part == "rounds":
            yield from _keyed_differences(where, stored[key], replayed[key])
        else:
            yield from _entry_differences(where, stored[key], replayed[key])


def _binding(document: Any) -> JournalBinding | None:  # noqa: ANN401 - a JSON document
    return None if document is None else binding_from_json(_reencoded(document))


def _chain(document: Any) -> SiteChain | None:  # noqa: ANN401 - a JSON document
    return None if document is None else msgspec.convert(document, SiteChain)


def differences(stored: LedgerState, replayed: LedgerState) -> list[str]:
    """What differs between the materialized state and the journal's, value by value."""
    ours, theirs = state_document(stored), state_document(replayed)
    found: list[str] = []
    for part in PARTS:
        if part not in ours and part not in theirs:
            continue
        ours.setdefault(part, None)
        theirs.setdefault(part, None)
        if ours[part] == theirs[part]:
            continue
        if (
            isinstance(ours[part], dict)
            and isinstance(theirs[part], dict)
            and part
            not in {
                "manifest",
                "authority",
            }
        ):
            found += _keyed_differences(part, ours[part], theirs[part])
        else:
            found += _entry_differences(part, ours[part], theirs[part])
    return found
