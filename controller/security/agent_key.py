"""A table agent's signing key: Ed25519, made on the agent's hardware, read by the agent alone.

The agent signs every device event it forwards (controller/agent_signature.py) and the ledger
takes an enrolled table's device events only with that signature (controller/ledger/
table_agents.py). The agent runs unattended, so its key is not sealed under a passphrase (as
an operator's is): like the controller's key, it is protected by the file's owner and mode,
0600, refused when open to other users.

``jackpotd table-agent key --table T1 --out agent.key`` writes a new key file and prints its
public half and id, which a manager enrolls (``jackpotd table-agent enroll``). The file is a
small JSON record: the version, the kind (``jackpotd-table-agent-key``, so that neither an
operator's nor the controller's key file is taken for it), the table it was made for, and the
public and private keys (base64 of their raw 32 bytes). A key's id is the first 16 hex digits
of the SHA-256 of the raw public key, as a checkpoint names the controller's.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.agent_signature import AgentSigner
from controller.errors import ConfigurationError
from controller.security.controller_key import key_id
from controller.security.keys import KeyFileError, public_key_text, read_secret, write_key_file

if TYPE_CHECKING:
    from pathlib import Path

KIND: Final = "jackpotd-table-agent-key"


class AgentKeyError(ConfigurationError, ValueError):
    """A table agent's key that cannot be used: the message names the file and the reason."""


class _AgentKeyRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    v: int
    kind: str
    table: str
    public_key: str
    private_key: str


@dataclass(frozen=True, slots=True)
class AgentKey:
    """A table agent's private key, the table it was made for, and its public half and id."""

    table_id: str
    private: Ed25519PrivateKey

    @classmethod
    def generate(cls, table_id: str) -> AgentKey:
        """A new key for ``table_id``'s agent."""
        return cls(table_id, Ed25519PrivateKey.generate())

    @property
    def public_key(self) -> str:
        """The public half: base64 of the raw 32 bytes."""
        return public_key_text(self.private)

    @property
    def key_id(self) -> str:
        """The key's id (see the module docstring)."""
        return key_id(self.public_key)

    def signer(self) -> AgentSigner:
        """What the agent signs with: the table, the key's id and its ``sign`` (not the key)."""
        return AgentSigner(self.table_id, self.key_id, self.private.sign)

    def file_content(self) -> bytes:
        """The key file of this key."""
        secret = base64.b64encode(self.private.private_bytes_raw()).decode()
        record = _AgentKeyRecord(1, KIND, self.table_id, self.public_key, secret)
        return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"


def write_agent_key(path: Path, key: AgentKey) -> None:
    """Write a new key file, mode 0600; never over an existing file."""
    try:
        write_key_file(path, key.file_content())
    except KeyFileError as error:
        raise AgentKeyError(str(error).replace("key file", "table agent key")) from error


def load_agent_key(path: Path) -> AgentKey:
    """The key in ``path``; :class:`AgentKeyError` naming the file and why not."""
    try:
        data = read_secret(path, "table agent key", closed_to=0o077, fix="chmod 600 it")
    except KeyFileError as error:
        raise AgentKeyError(str(error)) from error
    try:
        record = msgspec.json.decode(data, type=_AgentKeyRecord)
    except msgspec.MsgspecError as error:
        raise AgentKeyError(f"{path}: not a jackpotd table agent key ({error})") from error
    if record.v != 1 or record.kind != KIND:
        raise AgentKeyError(f"{path}: not a jackpotd table agent key")
    try:
        private = Ed25519PrivateKey.from_private_bytes(base64.b64decode(record.private_key))
    except (ValueError, binascii.Error) as error:
        raise AgentKeyError(f"{path}: a damaged table agent key ({error})") from error
    if public_key_text(private) != record.public_key:
        raise AgentKeyError(f"{path}: the private key does not match its public key")
    return AgentKey(record.table, private)
