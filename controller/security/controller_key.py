"""The controller's own signing key: Ed25519, held outside the journal, read by the service alone.

The controller signs its checkpoints (:mod:`controller.journal.checkpoints`) with this key, so
that whoever can write the journal file cannot write a checkpoint the controller would trust,
nor rebuild a history whose checkpoints still verify. The key is therefore never in the
journal, nor anywhere the journal's owner can write:

* in production systemd hands it to the service with ``LoadCredential=`` (systemd/jackpotd.service):
  the file lives under ``$CREDENTIALS_DIRECTORY``, readable by the service's user only and for
  as long as it runs; ``[controller] key_file = "${CREDENTIALS_DIRECTORY}/controller-key"``
  names it there;
* ``jackpotd key generate --out FILE`` writes a new key (mode 0600, never over an existing
  file) and prints the public half and its id, which the operators keep off the box: it is
  what ``jackpotd verify --controller-key`` (or an anchors file) checks the checkpoints with;
* ``jackpotd demo`` signs with a key made in memory for the run (:meth:`ControllerKey.generate`).

A key file is a small JSON record: the version, the kind (``jackpotd-controller-key``, so that
an operator's key file is never taken for it), the public key and the private key, each the
base64 of its raw 32 bytes. An unencrypted PKCS #8 PEM Ed25519 key is read too
(``openssl genpkey -algorithm ed25519``, as the lab's deploy/mosquitto/make-secrets.sh makes).
A key's **id** is the first 16 hex digits of the SHA-256 of the raw public key; checkpoints
name the key they were signed with by it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from controller.errors import ConfigurationError
from controller.security.keys import KeyFileError, public_key_text, read_secret, write_key_file

if TYPE_CHECKING:
    from collections.abc import Mapping

KIND: Final = "jackpotd-controller-key"
CREDENTIALS: Final = "${CREDENTIALS_DIRECTORY}"
"""The placeholder ``[controller] key_file`` may start with: systemd's credentials folder."""


class ControllerKeyError(ConfigurationError, ValueError):
    """The controller's key cannot be used: the message names the file and the reason."""


class _KeyRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    v: int
    kind: str
    public_key: str
    private_key: str


def key_id(public_key: str) -> str:
    """The id of a public key (base64 of its raw bytes): 16 hex digits of its SHA-256."""
    return hashlib.sha256(base64.b64decode(public_key)).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class ControllerKey:
    """The controller's private key, and the public key and id that go with it."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> ControllerKey:
        """A new key (the demo's, or one for ``jackpotd key generate``)."""
        return cls(Ed25519PrivateKey.generate())

    @property
    def public_key(self) -> str:
        """The public half: base64 of the raw 32 bytes."""
        return public_key_text(self.private)

    @property
    def key_id(self) -> str:
        """The key's id (see the module docstring)."""
        return key_id(self.public_key)

    def sign(self, data: bytes) -> str:
        """The Ed25519 signature of ``data``, base64."""
        return base64.b64encode(self.private.sign(data)).decode()

    def file_content(self) -> bytes:
        """The key file of this key."""
        secret = base64.b64encode(self.private.private_bytes_raw()).decode()
        record = _KeyRecord(1, KIND, self.public_key, secret)
        return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"


def resolve(text: str, environ: Mapping[str, str] | None = None) -> Path:
    """The key file a ``key_file`` setting names, ``${CREDENTIALS_DIRECTORY}`` expanded."""
    if not text.startswith(CREDENTIALS):
        return Path(text)
    folder = (os.environ if environ is None else environ).get("CREDENTIALS_DIRECTORY")
    if not folder:
        raise ControllerKeyError(
            f"{text}: $CREDENTIALS_DIRECTORY is not set (systemd's LoadCredential= sets it; "
            "outside systemd name the key file itself)"
        )
    return Path(folder) / text.removeprefix(CREDENTIALS).lstrip("/")


def load_key(path: Path) -> ControllerKey:
    """The key in ``path``; :class:`ControllerKeyError` naming the file and why not."""
    try:
        data = read_secret(
            path, "controller key", closed_to=0o007,
            fix="chmod 600 it, or hand it over with LoadCredential=",
        )  # fmt: skip
    except KeyFileError as error:
        raise ControllerKeyError(str(error)) from error
    key = _pem_key(path, data) if data.lstrip().startswith(b"-----") else _record_key(path, data)
    return ControllerKey(key)


def _record_key(path: Path, data: bytes) -> Ed25519PrivateKey:
    """The key of a ``jackpotd key generate`` file."""
    try:
        record = msgspec.json.decode(data, type=_KeyRecord)
    except msgspec.MsgspecError as error:
        what = _what_it_is(data, error)
        raise ControllerKeyError(f"{path}: not a jackpotd controller key: {what}") from error
    if record.v != 1 or record.kind != KIND:
        raise ControllerKeyError(f"{path}: not a jackpotd controller key")
    try:
        key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(record.private_key))
    except (ValueError, binascii.Error) as error:
        raise ControllerKeyError(f"{path}: a damaged controller key ({error})") from error
    if public_key_text(key) != record.public_key:
        raise ControllerKeyError(f"{path}: the private key does not match its public key")
    return key


OPERATOR_KIND: Final = "jackpotd-operator-key"
"""An operator's key file's kind (controller/security/keys.py), told apart from this one's."""


def _what_it_is(data: bytes, error: msgspec.MsgspecError) -> str:
    """What a file that is no controller key is, in words (not the JSON parser's)."""
    try:
        found = msgspec.json.decode(data)
    except msgspec.MsgspecError:
        return "not a key file at all (a controller key is the JSON jackpotd key generate writes)"
    kind = found.get("kind") if isinstance(found, dict) else None
    if kind == OPERATOR_KIND:
        return (
            f"it is the operator key of {found.get('operator')!r}, which signs a person's "
            "actions (jackpotd key generate makes the controller's)"
        )
    if kind == KIND:
        return f"a damaged controller key file ({error})"
    return "a JSON file, but no jackpotd key (jackpotd key generate writes the controller's)"


def _pem_key(path: Path, data: bytes) -> Ed25519PrivateKey:
    """An unencrypted PKCS #8 PEM key (``openssl genpkey -algorithm ed25519``)."""
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise ControllerKeyError(f"{path}: not a usable PEM private key ({error})") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise ControllerKeyError(f"{path}: the controller key must be Ed25519")
    return key


def write_key(path: Path, key: ControllerKey) -> None:
    """Write a new key file, mode 0600; never over an existing file."""
    try:
        write_key_file(path, key.file_content())
    except KeyFileError as error:
        raise ControllerKeyError(str(error).replace("key file", "controller key")) from error


def public_key(text: str) -> str:
    """A public key given as base64 of its raw 32 bytes (spaces around ignored), checked."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, binascii.Error) as error:
        raise ControllerKeyError(f"not an Ed25519 public key ({error})") from error
    return base64.b64encode(raw).decode()


def read_public_key(path: Path) -> str:
    """The public key in a file (what ``jackpotd key generate`` printed: base64 text)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not text"
        raise ControllerKeyError(f"{path}: cannot read the public key: {reason}") from error
    try:
        return public_key(text)
    except ControllerKeyError as error:
        raise ControllerKeyError(f"{path}: {error}") from error


def signature_verifies(public: str, signature: str, data: bytes) -> bool:
    """Whether ``signature`` (base64) is the holder of ``public`` signing ``data``."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public, validate=True))
        key.verify(base64.b64decode(signature, validate=True), data)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
