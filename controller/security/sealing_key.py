"""The mystery levels' sealing key file: the secret the cluster's keepers share.

A draw's trigger travels from one node's keeper to the next in an envelope the journal records
(controller/mystery/envelope.py). The key that opens it is one 32-byte secret, the same on every
node of the cluster, in a file of the keeper's own user: the signer's (``jackpotd signer
--sealing-key FILE``) in production, or the daemon's (``[controller] sealing_key_file``) where
the controller key is in the daemon too. ``jackpotd key generate --sealing --out FILE`` writes
a new one (mode 0600, never over an existing file) and prints its id; the operator copies the
file to every node's signer, as a broker's password file is copied (docs/ha.md, "Mystery levels
across a failover").

The file is a small JSON record: the version, the kind (``jackpotd-mystery-sealing-key``, so
that no other key file is ever taken for it), the key's id and the secret (base64). It is read
only from a file closed to others (as the controller key is, controller/security/keys.py).
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Final

import msgspec

from controller.errors import ConfigurationError
from controller.mystery.core import MysteryInputError
from controller.mystery.envelope import SealingKey
from controller.security.keys import KeyFileError, read_secret, write_key_file

if TYPE_CHECKING:
    from pathlib import Path

KIND: Final = "jackpotd-mystery-sealing-key"


class SealingKeyError(ConfigurationError, ValueError):
    """A sealing key file that cannot be used: the message names the file and why."""


class _Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    v: int
    kind: str
    key_id: str
    secret: str


def sealing_key_content(key: SealingKey) -> bytes:
    """The key file of ``key``."""
    record = _Record(1, KIND, key.key_id, base64.b64encode(key.secret).decode())
    return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"


def write_sealing_key(path: Path, key: SealingKey) -> None:
    """Write a new sealing key file, mode 0600; never over an existing file."""
    try:
        write_key_file(path, sealing_key_content(key))
    except KeyFileError as error:
        raise SealingKeyError(str(error).replace("key file", "sealing key")) from error


def load_sealing_key(path: Path) -> SealingKey:
    """The sealing key in ``path``; :class:`SealingKeyError` naming the file and why not."""
    try:
        data = read_secret(
            path, "sealing key", closed_to=0o007,
            fix="chmod 600 it, or hand it over with LoadCredential=",
        )  # fmt: skip
    except KeyFileError as error:
        raise SealingKeyError(str(error)) from error
    try:
        record = msgspec.json.decode(data, type=_Record)
    except msgspec.MsgspecError as error:
        raise SealingKeyError(f"{path}: not a sealing key file ({error})") from error
    if record.v != 1 or record.kind != KIND:
        raise SealingKeyError(
            f"{path}: a {record.kind!r} file (version {record.v}), not a {KIND} (version 1)"
        )
    try:
        key = SealingKey(base64.b64decode(record.secret, validate=True))
    except (binascii.Error, ValueError, MysteryInputError) as error:
        raise SealingKeyError(f"{path}: its secret is not 32 bytes of base64") from error
    if key.key_id != record.key_id:
        raise SealingKeyError(f"{path}: key_id {record.key_id} is not its secret's ({key.key_id})")
    return key
