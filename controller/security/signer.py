"""The controller key's signer: the signing interface, and the signer process's own rules.

The account that writes the journal must not hold the key that signs its history: a shell as
the service user could otherwise rewrite the journal and sign fresh checkpoints and heads over
it (docs/security.md, "History never goes back"). So in production the key is held by a small
**signer process** of its own user (``jackpotd signer``, controller/service/signer_server.py),
and the daemon signs through it (controller/runtime/remote_signer.py). Both sides meet here:

* :class:`Signer` is what the daemon signs with: ``key_id``, ``public_key`` and
  ``sign(data) -> base64``. A :class:`~controller.security.controller_key.ControllerKey`
  (the key in the process: the demo, a ``key_file``) is one; so is the remote signer.
* :func:`judge` is the signer process's rule for a statement about a journal's head: it keeps,
  per controller id, the highest row it signed (its **mark**: the row, that row's hash and the
  journal's identity) and refuses a head or a checkpoint below it, one at its row with another
  hash, and one of another journal than the mark's. A journal rolled back (or rewritten) by
  the service user therefore gets no signature over the history it now holds. Between two
  marks the signer cannot check that the rows chain (it never sees them): a rewrite above the
  mark is the journal's chain and checkpoints' to show (docs/journal.md).
* ``mystery-draw`` and ``mystery-check``: the signer is also the keeper of the mystery levels'
  sealed triggers (controller/mystery/keeper.py): it draws a level's trigger, signs the draw's
  commitment, and answers "not yet" or the reveal for each contribution, so that the account
  that writes the journal never holds a trigger before its hit. The answer's ``result`` is
  the draw statement or the verdict; ``ahead`` says a request was refused because the signer
  holds a state the daemon did not make (a higher meter asked already, or the draw made with
  another range), which the daemon takes for an alarm. ``mystery-envelope`` seals the draw it
  holds for the cluster's keepers and ``mystery-adopt`` takes another node's draw from its
  envelope (controller/mystery/envelope.py, docs/ha.md "Mystery levels across a failover").
* The wire: each request and each answer is a 4-byte big-endian length and that many bytes of
  JSON (:func:`frame`, :func:`frame_length`), at most :data:`MAX_FRAME`.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeAlias, cast, runtime_checkable

import msgspec

from controller.errors import RefusedError, UnavailableError

if TYPE_CHECKING:
    from controller.security.controller_key import ControllerKey

MAX_FRAME: Final = 1 << 20
"""The largest request or answer, in bytes (a checkpoint names every pool's meter)."""
LENGTH: Final = struct.Struct(">I")
TIMEOUT_S: Final = 2.0
"""How long the daemon waits for the signer's answer before it counts as unavailable."""

Kind: TypeAlias = Literal[
    "key",
    "head",
    "checkpoint",
    "meter",
    "pool-status",
    "hit",
    "mystery-draw",
    "mystery-check",
    "mystery-envelope",
    "mystery-adopt",
]
"""What a request asks: the public key, or a signature over one statement of a known kind."""


@runtime_checkable
class Signer(Protocol):
    """What signs the controller's statements: its key in the process, or the signer process."""

    @property
    def key_id(self) -> str:
        """The key's id (16 hex digits of the SHA-256 of the raw public key)."""
        ...

    @property
    def public_key(self) -> str:
        """The public half: base64 of the raw 32 bytes."""
        ...

    def sign(self, data: bytes) -> str:
        """The Ed25519 signature of ``data``, base64 (or :class:`SignerRefusedError`)."""
        ...


class SignerRefusedError(RefusedError, ValueError):
    """The signer refused to sign a statement: the message says why (nothing was signed)."""


class SignerUnavailableError(UnavailableError, ConnectionError):
    """The signer process cannot be reached, or did not answer in time.

    A :class:`ConnectionError` (an ``OSError``): the sequencer logs a head it could not sign and
    tries again at the next commit, as for a high-water file it could not write.
    """


class Request(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A request to the signer: ``kind`` and the statement's fields (none for ``key``)."""

    v: int
    kind: Kind
    statement: dict[str, msgspec.Raw] | None = None


class Answer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The signer's answer: the signature (or key, or a mystery ``result``), else why not."""

    ok: bool
    signature: str = ""
    public_key: str = ""
    reason: str = ""
    result: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    """A mystery request's answer: the draw statement, or the verdict (JSON)."""
    ahead: bool = False
    """A mystery request refused because the signer holds a state of the level its asker did
    not make (asked about a higher meter already, or the draw made with another range)."""


class Mark(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The highest row the signer signed for a controller: its hash, the journal's identity."""

    seq: int
    hash: str
    journal: str
    at: str


def judge(mark: Mark | None, journal: str | None, seq: int, row_hash: str) -> str | None:
    """Why the signer refuses a statement that row ``seq`` has hash ``row_hash`` (None: it signs).

    ``journal``: the journal identity the statement names (None: it names none, a checkpoint).
    A mark made on a journal without an identity takes the identity the journal is later given
    (its first enrollment names it, controller/ledger/binding.py).
    """
    if mark is None:
        return None
    if journal and mark.journal and journal != mark.journal:
        return (
            f"the signer's mark is of journal {mark.journal}, and this statement is of journal "
            f"{journal}: another journal, or one rebuilt (a new journal on purpose: the signer's "
            "owner retires the mark, docs/operations.md)"
        )
    if seq < mark.seq:
        return (
            f"row {seq} is below row {mark.seq} the signer signed at {mark.at}: the journal "
            "went back; nothing is signed over it"
        )
    if seq == mark.seq and row_hash != mark.hash:
        return (
            f"row {seq} has hash {row_hash[:16]}..., and the signer signed it with hash "
            f"{mark.hash[:16]}... at {mark.at}: the journal was rewritten"
        )
    return None


def raised(mark: Mark | None, journal: str | None, seq: int, row_hash: str, at: str) -> Mark:
    """The mark after signing row ``seq`` (never lower than ``mark``)."""
    known = journal or (mark.journal if mark else "")
    if mark is not None and seq == mark.seq and (known == mark.journal):
        return mark
    return Mark(seq, row_hash, known, at)


def frame(message: msgspec.Struct) -> bytes:
    """``message`` as JSON behind its 4-byte length."""
    body = msgspec.json.encode(message)
    if len(body) > MAX_FRAME:
        raise SignerRefusedError(f"a signer message of {len(body):,} bytes (at most {MAX_FRAME:,})")
    return LENGTH.pack(len(body)) + body


def frame_length(header: bytes) -> int:
    """The length a 4-byte header announces, refused above :data:`MAX_FRAME`."""
    (length,) = LENGTH.unpack(header)
    if length > MAX_FRAME:
        raise SignerRefusedError(f"a signer message of {length:,} bytes (at most {MAX_FRAME:,})")
    return int(length)


def as_controller_key(signer: Signer) -> ControllerKey:
    """``signer`` where the journal's functions name a ``ControllerKey``.

    They use only what :class:`Signer` has (``key_id``, ``public_key``, ``sign``): seal a
    checkpoint (controller/journal/checkpoints.py), sign a head (controller/journal/high_water.py),
    check the stored state (controller/journal/state_check.py). Until they name the protocol,
    this is the one place a signer is passed for a key.
    """
    return cast("ControllerKey", signer)
