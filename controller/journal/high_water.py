"""The journal's high-water mark: the controller's signed word of how far its journal has come.

A restored backup, or a file rebuilt by someone who can write it, can drop the rows after the
last checkpoint (wagers acknowledged, wins paid) or edit one and recompute the chain after it;
the chain still verifies, and a controller that trusted it would sign a fresh checkpoint over
the rewritten history with its real key. So the running controller signs its journal's head
often (a **signed head**: row ``seq`` has hash ``hash``; every ``head_rows`` rows, or
``head_interval_s`` seconds after a row, whichever first: docs/security.md, "History never goes
back"), keeps the latest outside the journal, in the **high-water file**, and publishes it where
the journal's writer cannot reach (a retained MQTT topic). At start-up, and before it signs any
checkpoint, it checks that the journal still holds that row with that hash
(:func:`problem`); if it does not, the journal went back, and the controller refuses to start
(or fails closed) rather than sign it.

What is signed is :data:`DOMAIN` followed by the canonical JSON of the head's fields (keys
sorted, no spaces, the signature left out), under the controller's key
(:mod:`controller.security.controller_key`), as checkpoints are. The file is one JSON document,
replaced atomically (written beside, flushed to disk, renamed, the folder flushed), so that a
power cut leaves the old mark or the new one, never neither.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from controller.errors import InputError
from controller.journal.errors import JournalError
from controller.outputs import SignedHead
from controller.security.controller_key import key_id, signature_verifies

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.security.controller_key import ControllerKey

DOMAIN: Final = b"jackpotd signed head v1\n"
MODE: Final = 0o640
"""The high-water file's mode: the service writes it, its group (the auditors) reads it."""

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


class HighWaterError(JournalError):
    """The journal is behind the controller's signed high-water mark: it went back."""


class HighWaterFileError(InputError, ValueError):
    """The high-water file cannot be read, or its signature does not verify."""


def signed_bytes(head: SignedHead) -> bytes:
    """What the controller signs (see the module docstring)."""
    return DOMAIN + _CANONICAL.encode(msgspec.structs.replace(head, signature=""))


def sign_head(
    key: ControllerKey, controller: str, journal: str, head: tuple[int, str], at: str
) -> SignedHead:
    """The signed head of a journal whose last row is ``head`` (seq, hash)."""
    unsigned = SignedHead(controller, journal, head[0], head[1], at, key.key_id)
    return msgspec.structs.replace(unsigned, signature=key.sign(signed_bytes(unsigned)))


def head_verifies(head: SignedHead, public_keys: Sequence[str]) -> bool:
    """Whether ``head`` is signed by one of ``public_keys`` (by key id)."""
    return any(
        key_id(public) == head.key_id
        and signature_verifies(public, head.signature, signed_bytes(head))
        for public in public_keys
    )


def problem(head: SignedHead, row_hash: Callable[[int], str | None], journal: str) -> str | None:
    """Why a journal is behind ``head`` (None: it holds it).

    ``row_hash`` gives the hash of a row of the journal (None: no such row); ``journal`` is the
    journal's identity now.
    """
    if head.journal and journal != head.journal:
        return (
            f"the controller's signed head is of journal {head.journal}, and this one is "
            f"{journal or 'without an identity'}: another journal, or one rebuilt"
        )
    found = row_hash(head.seq)
    if found is None:
        return (
            f"the journal went back: the controller signed row {head.seq} (hash "
            f"{head.hash[:16]}...) at {head.at}, and the journal has no row {head.seq}"
        )
    if found != head.hash:
        return (
            f"the journal was rewritten: the controller signed row {head.seq} with hash "
            f"{head.hash[:16]}... at {head.at}, and the journal's row {head.seq} has hash "
            f"{found[:16]}..."
        )
    return None


def read_high_water(path: Path) -> SignedHead | None:
    """The signed head the file holds; None if there is no file (a first start)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise HighWaterFileError(f"{path}: cannot read the high-water file: {error}") from error
    try:
        return msgspec.json.decode(data, type=SignedHead)
    except msgspec.MsgspecError as error:
        raise HighWaterFileError(f"{path}: not a high-water file: {error}") from error


def write_high_water(path: Path, head: SignedHead) -> None:
    """Replace the file's mark with ``head``, atomically and durably (mode :data:`MODE`)."""
    _replace(path, msgspec.json.encode(head))


def read_site_heads(path: Path) -> dict[str, SignedHead]:
    """The signed heads central keeps of its properties, by site ({} if there is no file).

    Central's own file (:func:`site_heads_path`): each property's highest valid signed head,
    answered to the property's next start (docs/security.md, "History never goes back").
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise HighWaterFileError(f"{path}: cannot read the properties' heads: {error}") from error
    try:
        return msgspec.json.decode(data, type=dict[str, SignedHead])
    except msgspec.MsgspecError as error:
        raise HighWaterFileError(f"{path}: not a file of properties' heads: {error}") from error


def write_site_heads(path: Path, heads: dict[str, SignedHead]) -> None:
    """Replace the properties' heads central keeps, atomically and durably, as the mark's file."""
    _replace(path, _CANONICAL.encode(heads))


def site_heads_path(high_water: Path) -> Path:
    """Where central keeps its properties' heads: beside its own high-water file."""
    name = high_water.name.removesuffix(".high-water")
    return high_water.with_name(f"{name}.site-heads")


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # var/ under a PostgreSQL journal's default
    staged = path.with_name(f".{path.name}.new")
    descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MODE)
    try:
        os.fchmod(descriptor, MODE)  # whatever the umask
        os.write(descriptor, data)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    staged.replace(path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def high_water_path(journal: str, node: str | None = None) -> Path:
    """Where the high-water file of a journal is kept unless configured: beside an SQLite file.

    A PostgreSQL journal (a URL) keeps it under ``var/``, named after the database and the
    node: each node of a cluster keeps the mark it signed, and no two share a file. The path is
    relative: the configuration's loader puts it beside the configuration file.
    """
    if "://" in journal:
        name = journal.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0] or "journal"
        return Path("var") / (f"{name}.{node}.high-water" if node else f"{name}.high-water")
    return Path(f"{journal}.high-water")
