"""Anchors: heads of the journal saved off the box, and the controller's public keys.

The hash chain shows a changed row, but someone who can rewrite the whole file can drop the
rows they forged and append the rest again into a new file whose chain verifies. What they
cannot do is change a head that was written down elsewhere before: an **anchor** is a row
number and that row's hash, kept off the box; the history that was anchored has that hash at
that row, and a rebuilt one does not (every hash depends on every row before it).

An **anchors file** is a sequence of JSON values (JSON lines, or a pretty-printed document),
each one of:

* ``{"seq": N, "hash": "..."}``: a head, as ``jackpotd anchor save`` appends it; anything else
  in the object is ignored, so the retained MQTT payload of a checkpoint
  (``controller/<id>/checkpoint``) is an anchor as it is, and its signature is checked too
  when the controller's key is known;
* what ``jackpotd verify --json`` prints: its ``head`` is the anchor (a failed verification
  is refused: a head nobody could vouch for anchors nothing);
* ``{"controller_key": "..."}``: a controller's public key (base64), as ``jackpotd key
  generate`` prints it, that checkpoints may be signed with. A file may list several: the
  keys of before a rotation keep the old checkpoints verifying.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from controller.errors import InputError
from controller.events import CheckpointRecorded
from controller.journal.checkpoints import signature_holds
from controller.security.controller_key import ControllerKeyError, public_key

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

_HASH: Final = re.compile(r"[0-9a-f]{64}")
_SIGNED: Final = ("controller", "state_digest", "meters", "key_id", "at", "signature")
"""The fields that make a head a signed checkpoint statement (its MQTT payload)."""


class AnchorError(InputError, ValueError):
    """An anchors file that cannot be read; the message names the file, line and reason."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """A saved head: row ``seq`` had hash ``hash``; where it was read; its signature if any."""

    seq: int
    hash: str
    where: str
    signed: CheckpointRecorded | None = None


@dataclass(slots=True)
class Anchors:
    """The heads and controller keys of one or more anchors files."""

    heads: list[Anchor] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def add(self, other: Anchors) -> None:
        """Take in another file's anchors and keys."""
        self.heads += other.heads
        self.keys += [key for key in other.keys if key not in self.keys]


def _values(text: str) -> list[tuple[int, Any]]:
    """Each JSON value of the text, with the line it starts on."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, Any]] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return found
        line = text.count("\n", 0, position) + 1
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise ValueError(f"line {line}: not JSON ({error.msg})") from error
        found.append((line, value))


def _head(value: dict[str, Any], where: str) -> Anchor:
    seq, digest = value.get("seq"), value.get("hash")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise AnchorError(f"{where}: seq must be a row number")
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        raise AnchorError(f"{where}: hash must be 64 hex digits")
    signed = None
    if all(name in value for name in _SIGNED):
        signed = CheckpointRecorded(
            "", str(value["at"]), str(value["controller"]), seq, digest,
            str(value["state_digest"]), dict(value["meters"]), str(value["key_id"]),
            str(value["signature"]),
        )  # fmt: skip
    return Anchor(seq, digest, where, signed)


def _read_value(value: object, where: str, anchors: Anchors) -> None:
    if not isinstance(value, dict):
        raise AnchorError(f"{where}: an anchor is a JSON object")
    if "controller_key" in value:
        try:
            key = public_key(str(value["controller_key"]))
        except ControllerKeyError as error:
            raise AnchorError(f"{where}: controller_key: {error}") from error
        if key not in anchors.keys:
            anchors.keys.append(key)
    elif isinstance(value.get("head"), dict):
        if value.get("ok") is not True:
            raise AnchorError(f"{where}: a verification that failed is not an anchor")
        anchors.heads.append(_head(value["head"], where))
    elif "seq" in value or "hash" in value:
        anchors.heads.append(_head(value, where))
    else:
        raise AnchorError(f"{where}: neither a head (seq and hash) nor a controller_key")


def read_anchors(path: Path) -> Anchors:
    """The anchors and keys of a file; :class:`AnchorError` naming the file and line if bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not text"
        raise AnchorError(f"{path}: cannot read the anchors: {reason}") from error
    anchors = Anchors()
    try:
        values = _values(text)
    except ValueError as error:
        raise AnchorError(f"{path}: {error}") from error
    for line, value in values:
        _read_value(value, f"{path}:{line}", anchors)
    return anchors


def check_anchor(
    anchor: Anchor, rows: int, hash_at: Callable[[int], str | None], keys: Sequence[str]
) -> list[str]:
    """What is wrong with the journal (or the anchor) by this anchor; empty if it holds."""
    problems = []
    found = hash_at(anchor.seq)
    if found is None:
        problems.append(
            f"anchor {anchor.where}: row {anchor.seq} is not in the journal ({rows:,} rows): "
            "rows anchored were removed"
        )
    elif found != anchor.hash:
        problems.append(
            f"anchor {anchor.where}: row {anchor.seq} has the hash {found[:16]}..., the anchor "
            f"{anchor.hash[:16]}...: this is not the history that was anchored"
        )
    if anchor.signed is not None and keys:
        holds = signature_holds(anchor.signed, keys)
        if holds is None:
            problems.append(
                f"anchor {anchor.where}: signed by key {anchor.signed.key_id}, "
                "not a controller key given"
            )
        elif not holds:
            problems.append(f"anchor {anchor.where}: its signature does not verify")
    return problems
