"""Operators' signing keys at rest: Ed25519, encrypted under a passphrase with a memory-hard KDF.

An operator proves an action by signing it with an Ed25519 private key
(:mod:`controller.security.signatures`); the journal holds only the public key. The private key
lives in a **key file** the operator keeps (on a token, in a safe, on the supervisor's workstation),
never in the journal and never on the controller unless the operator brings it:

* the key is encrypted with ChaCha20-Poly1305 under a key derived from the operator's
  passphrase by **scrypt** (RFC 7914), memory-hard, at n = 2**17, r = 8 (128 MiB and about
  half a second a try), so a stolen key file is slow to guess even on special hardware;
* the file records the KDF's parameters and salt, so that stronger parameters can be chosen
  later without breaking old files, and the public key in clear, so that a wrong passphrase
  and a key file of another operator are told apart;
* a wrong passphrase fails the AEAD's tag: :class:`KeyFileError` (``wrong passphrase``), which
  the command line journals as a failed authentication (and the ledger locks the operator out
  after a configured count: :mod:`controller.ledger.authority`).

Passphrases that are trivial to guess are refused (:func:`check_passphrase`): at least
:data:`MIN_PASSPHRASE` characters, at least :data:`MIN_DISTINCT` distinct ones, not a run
(``abcdef...``, ``123456...``), not a well-known password and not holding the operator's name;
nor a well-known password or the operator's name padded with a run or a few characters
(``password123456``): beyond those, at least :data:`MIN_LEFT` letters or digits must be left
that are not a run.
"""

from __future__ import annotations

import base64
import itertools
import secrets
import stat
import string
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from controller.errors import InputError
from controller.files import SECRET, write_file

if TYPE_CHECKING:
    from pathlib import Path

KIND: Final = "jackpotd-operator-key"
SCRYPT_N: Final = 2**17
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
MIN_PASSPHRASE: Final = 12
MIN_DISTINCT: Final = 6
MIN_LEFT: Final = 8
_WELL_KNOWN: Final = frozenset(
    {
        "password", "passw0rd", "letmein", "qwerty", "qwertyuiop", "iloveyou", "welcome",
        "administrator", "jackpotd", "jackpot", "changeme", "supervisor", "manager", "casino",
        "paigow", "000000", "123456", "1234567890", "abcdef",
    }
)  # fmt: skip


class KeyFileError(InputError, ValueError):
    """A key file that cannot be used: unreadable, not a key file, or the wrong passphrase."""


class PassphraseError(InputError, ValueError):
    """A passphrase too easy to guess to protect a signing key."""


class _Kdf(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    n: int
    r: int
    p: int
    salt: str


class _KeyFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    v: int
    kind: str
    operator: str
    public_key: str
    kdf: _Kdf
    cipher: str
    nonce: str
    ciphertext: str


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def public_key_text(key: Ed25519PrivateKey) -> str:
    """The public half of a key as the journal holds it: base64 of the raw 32 bytes."""
    return _b64(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def _step(a: str, b: str) -> int:
    # Digits wrap around as on a keyboard's row: 7890123 is a run (steps -1..8, modulo 10).
    if a in string.digits and b in string.digits:
        return (ord(b) - ord(a) + 1) % 10 - 1
    return ord(b) - ord(a)


def _is_run(text: str) -> bool:
    steps = {_step(a, b) for a, b in itertools.pairwise(text)}
    return len(steps) == 1 and steps <= {-1, 0, 1}


def _alphanumeric(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())


def check_passphrase(passphrase: str, operator: str = "") -> None:
    """Refuse a passphrase that is trivial to guess (see the module docstring)."""
    if len(passphrase) < MIN_PASSPHRASE:
        raise PassphraseError(f"a passphrase has at least {MIN_PASSPHRASE} characters")
    if len(set(passphrase)) < MIN_DISTINCT:
        raise PassphraseError(f"a passphrase has at least {MIN_DISTINCT} different characters")
    folded = passphrase.casefold()
    if _is_run(folded):
        raise PassphraseError("a passphrase is not a run of characters (abcd..., 1234...)")
    bare = _alphanumeric(passphrase)
    name = _alphanumeric(operator)
    if (
        bare in _WELL_KNOWN
        or (operator and operator.casefold() in folded)
        or (name and name in bare)
    ):
        raise PassphraseError("a passphrase is not a well-known password nor the operator's name")
    # What is left once the well-known words and the parts of the name are taken out.
    parts = {_alphanumeric(part) for part in operator.split()}
    left = bare
    known = _WELL_KNOWN | {part for part in parts if len(part) > 2}  # initials are no name
    for word in sorted(known, key=len, reverse=True):
        left = left.replace(word, "")
    if len(left) < MIN_LEFT or _is_run(left):
        raise PassphraseError(
            "a passphrase is more than a well-known password or the operator's name and a few "
            f"characters (at least {MIN_LEFT} letters or digits besides them, not a run)"
        )


def _derive(passphrase: str, kdf: _Kdf) -> bytes:
    if kdf.name != "scrypt":
        raise KeyFileError(f"unknown key derivation {kdf.name!r}")
    scrypt = Scrypt(salt=_unb64(kdf.salt), length=32, n=kdf.n, r=kdf.r, p=kdf.p)
    return scrypt.derive(passphrase.encode())


def seal(key: Ed25519PrivateKey, operator: str, passphrase: str, *, n: int = SCRYPT_N) -> bytes:
    """The key file of ``key``: the private key encrypted under the passphrase."""
    check_passphrase(passphrase, operator)
    kdf = _Kdf("scrypt", n, SCRYPT_R, SCRYPT_P, _b64(secrets.token_bytes(16)))
    nonce = secrets.token_bytes(12)
    public = public_key_text(key)
    secret = key.private_bytes_raw()
    associated = f"{KIND}:{operator}:{public}".encode()
    sealed = ChaCha20Poly1305(_derive(passphrase, kdf)).encrypt(nonce, secret, associated)
    record = _KeyFile(
        1, KIND, operator, public, kdf, "chacha20-poly1305", _b64(nonce), _b64(sealed)
    )
    return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"


def write_key_file(path: Path, content: bytes) -> None:
    """Write a new key file readable by its owner only (0600 whatever the umask), never over one."""
    try:
        write_file(path, content, SECRET, exclusive=True)
    except OSError as error:
        raise KeyFileError(f"{path}: cannot create the key file: {error.strerror}") from error


def read_secret(path: Path, what: str, *, closed_to: int, fix: str) -> bytes:
    """The bytes of a private key's file; :class:`KeyFileError` naming the file and why not.

    A key is read only from a plain file whose mode has none of the ``closed_to`` bits: 0o077
    for a key its owner alone holds, 0o007 where systemd's ``LoadCredential=`` hands it to the
    unit's group. ``what`` names the key in the message, ``fix`` says how to close it.
    """
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise KeyFileError(f"{path}: the {what} is not a file")
        if mode & closed_to:
            whom = "other users" if closed_to & 0o070 else "every user"
            raise KeyFileError(
                f"{path}: the {what} is open to {whom} (mode {mode & 0o777:o}); {fix}"
            )
        return path.read_bytes()
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read the {what}: {error.strerror}") from error


def read_key_file(path: Path) -> _KeyFile:
    """A key file's record (not yet decrypted)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read the key file: {error.strerror}") from error
    try:
        record = msgspec.json.decode(data, type=_KeyFile)
    except msgspec.MsgspecError as error:
        raise KeyFileError(f"{path}: not a jackpotd key file ({error})") from error
    if record.v != 1 or record.kind != KIND:
        raise KeyFileError(f"{path}: not a jackpotd operator key file")
    return record


def open_key(path: Path, passphrase: str) -> tuple[str, Ed25519PrivateKey]:
    """The operator named in a key file and its private key; :class:`KeyFileError` if not."""
    record = read_key_file(path)
    associated = f"{KIND}:{record.operator}:{record.public_key}".encode()
    try:
        cipher = ChaCha20Poly1305(_derive(passphrase, record.kdf))
        secret = cipher.decrypt(_unb64(record.nonce), _unb64(record.ciphertext), associated)
    except InvalidTag as error:
        raise KeyFileError(f"{path}: wrong passphrase for {record.operator}") from error
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"{path}: a damaged key file ({error})") from error
    key = Ed25519PrivateKey.from_private_bytes(secret)
    if public_key_text(key) != record.public_key:
        raise KeyFileError(f"{path}: the key does not match its public key")
    return record.operator, key


def generate() -> Ed25519PrivateKey:
    """A new signing key."""
    return Ed25519PrivateKey.generate()
