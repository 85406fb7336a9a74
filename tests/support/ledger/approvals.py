"""A site whose authority is signed, for tests: keyed operators, signed events, approvals.

``Site.create(journal)`` enrolls a manager (self-signed, which makes the journal's authority
signed for good) and two supervisors, each with a fresh Ed25519 key held in memory (and, on
request, a key file under a fast scrypt setting: tests need not wait half a second a key).
``site.sign(event, "mgr")`` signs an event as operators would; ``site.approve(config)`` signs
and journals the configuration approval the daemon needs; ``site.key_file(name, folder)``
writes an operator's key file for command-line tests.

Import it as ``from support.ledger.approvals import Site`` (tests/ is on the path; see
tests/conftest.py).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol

from typing_extensions import TypeVar

from controller.clock import utc_now
from controller.config.approval import configuration_approval
from controller.events import OperatorEnrolled
from controller.ledger.binding import signed_by
from controller.ledger_journal.sqlite import Journal
from controller.security import keys

if TYPE_CHECKING:
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.config.load import Config
    from controller.events import AnyEvent
    from controller.ledger.apply import LedgerState
    from controller.ports import Receipt

E = TypeVar("E", bound="AnyEvent")


class Appends(Protocol):
    """What a site needs of its journal: its state, and an append (a file, a database, twins)."""

    @property
    def state(self) -> LedgerState:
        """The ledger's state after the last row."""

    def append(self, event: AnyEvent) -> Receipt:
        """Journal ``event``."""


J = TypeVar("J", bound=Appends, default=Journal)
"""The site's journal: a plain ``Site`` is one over a SQLite file."""

FAST_SCRYPT_N = 2**10
"""The KDF cost of tests' key files (real ones use keys.SCRYPT_N)."""
PASSPHRASE = "correct horse battery staple"  # noqa: S105 - the tests' own, not a secret
now = utc_now
"""The controller's clock, as the events tests sign read it (tests import it from here)."""


def enrollment(name: str, role: str, key: Ed25519PrivateKey, by: str) -> OperatorEnrolled:
    """An unsigned enrollment of ``name`` with ``key``'s public half."""
    return OperatorEnrolled(
        f"operator-{uuid.uuid4()}", now(), name, role, "", "", "ed25519", by,
        public_key=keys.public_key_text(key),
    )  # fmt: skip


@dataclass
class Site(Generic[J]):
    """A journal with keyed operators (see the module docstring)."""

    journal: J
    keys: dict[str, Ed25519PrivateKey] = field(default_factory=dict)

    @classmethod
    def create(
        cls, journal: J, manager: str = "mgr", supervisors: tuple[str, ...] = ("sup1", "sup2")
    ) -> Site[J]:
        """A manager (who makes the journal's authority signed) and supervisors, with keys."""
        site = cls(journal)
        site.keys[manager] = keys.generate()
        first = enrollment(manager, "manager", site.keys[manager], manager)
        site.append(site.sign(first, manager))
        for name in supervisors:
            site.enroll(name, "supervisor", by=manager)
        return site

    def enroll(self, name: str, role: str, *, by: str) -> Receipt:
        """Enroll ``name`` with a fresh key, signed by ``by``."""
        self.keys[name] = keys.generate()
        return self.append(self.sign(enrollment(name, role, self.keys[name], by), by))

    def sign(self, event: E, *names: str) -> E:
        """``event`` signed by each of ``names``, in order, bound to the journal as it stands."""
        return signed_by(self.journal.state, event, [(name, self.keys[name]) for name in names])

    def append(self, event: AnyEvent) -> Receipt:
        """Journal ``event``; it must be applied."""
        receipt = self.journal.append(event)
        assert receipt.applied, (event, receipt.reason)
        return receipt

    def approve(self, config: Config, by: str = "mgr") -> Receipt | None:
        """Sign and journal the approval ``config`` needs (None if it needs none)."""
        approval = configuration_approval(config, self.journal.state, now(), by)
        return None if approval is None else self.append(self.sign(approval, by))

    def key_file(self, name: str, folder: Path) -> Path:
        """Write ``name``'s key file (fast scrypt) sealed under :data:`PASSPHRASE`."""
        return key_file(folder, name, self.keys[name])


def key_file(folder: Path, name: str, key: Ed25519PrivateKey | None = None) -> Path:
    """Write ``folder/NAME.key``: ``key`` (else a new one) of ``name``, under :data:`PASSPHRASE`.

    As ``jackpotd operator key`` writes it, but at the tests' fast scrypt setting; a key of
    nobody enrolled, without ``key``.
    """
    path = folder / f"{name}.key"
    sealed = keys.seal(key or keys.generate(), name, PASSPHRASE, n=FAST_SCRYPT_N)
    keys.write_key_file(path, sealed)
    return path
