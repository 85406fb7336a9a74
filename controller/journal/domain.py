"""What the journal asks of the domain it records, which the layer above hands it.

The application calls the domain; the journal only records (docs/architecture.md, "The
layers"). Every backend is opened with a :class:`Domain` (the application opens each with the
ledger's, :mod:`controller.ledger_journal`), and the sequencer hands the same to each
:meth:`controller.journal.port.JournalPort.prepare`: the one step that applies an event
(:mod:`controller.ledger.domain` gives the ledger's) and the encoders of the state the journal
materializes. The append path (:mod:`controller.journal.appending`) records what the step
returns (the new state, the effects, why it refused the event); no module of the journal
imports the ledger, and the import-linter contracts in ``pyproject.toml`` hold it to that.

After a refused row of a live append, the domain may give one alert to journal next
(:meth:`Domain.clone_evidence`: the proof of a cloned passkey), recorded as any event is.

The refusals an event meets before it is applied (who may write a table's word, a signature's
window at a live append, a table agent's word) are the domain's too (:meth:`Domain.screen`, a
:class:`Screen`: the ledger's are :mod:`controller.ledger.screen`).

The state's other encodings are the domain's too: the materialized rows read back
(:meth:`Domain.state_from_rows`), the canonical snapshot a checkpoint signs
(:meth:`Domain.snapshot_text`) and its inverse, and the comparisons ``verify`` and the
start-up check make of a stored state with a replayed one. A backend is given its domain when
it is opened, and hands it to each check it runs.

The domain is handed in, not imported, because the journal's write lock decides which events
are applied at all: an id journaled before is answered with its first receipt and never
applied again, and rows another process appended are taken in first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping

    from controller.effects import AnyEffect
    from controller.events import AnyEvent, TableConfigured
    from controller.journal.site_messages import ChainHead


class RecordedBinding(Protocol):
    """The journal's identity in the state, as the start-up check reads it."""

    @property
    def journal(self) -> str:
        """The journal's identity."""

    @property
    def accepted(self) -> Collection[tuple[int, str]]:
        """High-water marks (row, hash) managers accepted to lose in a restore."""


class RecordedState(Protocol):
    """The parts of the domain's state the journal materializes, as it reads them.

    Each is compared by identity with the batch's start (the domain never changes a state in
    place), and each changed part is written through the :class:`Domain`'s encoders.
    """

    @property
    def pools(self) -> Mapping[str, object]:
        """Each pool, by id."""

    @property
    def table_events(self) -> Mapping[str, TableConfigured]:
        """Each table's configuration, as the event that set it."""

    @property
    def table_states(self) -> Mapping[str, object]:
        """Each table's live state, by id."""

    @property
    def rounds(self) -> Mapping[tuple[str, str], object]:
        """The locked wagers of each open round, by table and round."""

    @property
    def operators(self) -> Mapping[str, object]:
        """Each enrolled operator, by name."""

    @property
    def sites(self) -> Mapping[str, object]:
        """Central's linked properties."""

    @property
    def revision(self) -> int:
        """The configuration revision."""

    @property
    def manifest(self) -> object:
        """The approved manifest, or None."""

    @property
    def authority(self) -> object:
        """How authority is checked."""

    @property
    def chain(self) -> ChainHead | None:
        """A property's chain of messages to central, or None."""

    @property
    def pending(self) -> Mapping[str, object]:
        """The payouts awaiting verification, by payout id."""

    @property
    def binding(self) -> RecordedBinding | None:
        """The journal's identity and the signed events it applied, or None."""


class Refusal(Protocol):
    """A writer's event refused before it is applied: the fault journaled in its place.

    The writer is answered with the event refused for :attr:`reason`, at the fault's row.
    """

    @property
    def fault(self) -> AnyEvent:
        """The fault journaled instead of the event."""

    @property
    def reason(self) -> str:
        """Why the event was refused: the reason of the writer's answer."""


State = TypeVar("State", bound=RecordedState)

Stepped = tuple[State, "tuple[AnyEffect, ...]", "str | None"]
"""What one step made of an event: the new state, its effects, and why the domain refused it
(None: applied)."""

_Screened_contra = TypeVar("_Screened_contra", bound=RecordedState, contravariant=True)


class Screen(Protocol[_Screened_contra]):
    """The refusals a writer's event meets before it is applied (the backend's, in the journal).

    ``signed``: the authority as the append found it; ``state``: the state the event meets;
    ``origin``: who wrote it; ``now``: the controller's clock at a live append (None: a replay).
    """

    def __call__(
        self,
        signed: bool,  # noqa: FBT001 - the shape of controller.ledger.screen.screened
        state: _Screened_contra,
        event: AnyEvent,
        origin: str | None,
        now: str | None,
    ) -> Refusal | None:
        """The first refusal ``event`` meets; None: apply it."""


class Domain(Protocol[State]):
    """The domain as the journal's append uses it (see the module docstring).

    The encoders (``*_json``, ``operator_row``) give each part of the state as its row of the
    materialized state holds it; each takes the domain's own type.
    """

    def step(self, state: State, event: AnyEvent) -> Stepped[State]:
        """Apply ``event``; a refusal is its reason, the state as it was (see :data:`Stepped`).

        An exception is a fault in the domain itself: the journal records the event refused
        (``internal error: ...``) rather than stopping on it.
        """

    def signed(self, state: State) -> bool:
        """Whether the state's authority is signed (a table's word then needs the intake)."""

    def clone_evidence(self, state: State, event: AnyEvent) -> AnyEvent | None:
        """The alert to journal right after ``event``, refused on ``state``; None: no alert.

        A signature whose sign count went back is a cloned authenticator's (docs/security.md,
        "Passkeys"): a live append journals the alert this gives after the refused row, in
        the same transaction, so that the credential is held at once.
        """

    def pool_json(self, pool: Any) -> str:  # noqa: ANN401
        """A pool's ``pools`` row."""

    def table_state_json(self, table: Any) -> str:  # noqa: ANN401
        """A table's ``table_states`` row."""

    def wagers_json(self, wagers: Any) -> str:  # noqa: ANN401
        """An open round's ``rounds`` row."""

    def operator_row(self, operator: Any) -> tuple[object, ...]:  # noqa: ANN401
        """An operator's ``operators`` columns after its name, but its ``seq``."""

    def manifest_json(self, manifest: Any) -> str:  # noqa: ANN401
        """The approved manifest's ``meta`` row."""

    def authority_json(self, authority: Any) -> str:  # noqa: ANN401
        """The authority's ``meta`` row."""

    def sites_json(self, sites: Any) -> str:  # noqa: ANN401
        """The linked properties' ``meta`` row."""

    def chain_json(self, chain: Any) -> str:  # noqa: ANN401
        """A property's chain's ``meta`` row."""

    def binding_json(self, binding: Any) -> str:  # noqa: ANN401
        """The journal's binding's ``meta`` row."""

    def screen(
        self,
        signed: bool,  # noqa: FBT001 - the shape of Screen
        state: State,
        event: AnyEvent,
        origin: str | None,
        now: str | None,
    ) -> Refusal | None:
        """The first refusal a writer's ``event`` meets before it is applied (a :class:`Screen`)."""

    def table_word(self, event: AnyEvent) -> bool:
        """Whether ``event`` is a table's own word, which a signed journal takes from its intake."""

    def empty(self) -> State:
        """The state of a journal without rows: what a replay from the first row starts at."""

    def state_from_rows(
        self,
        rows: Mapping[str, Iterable[Mapping[str, Any]]],
        locks: Callable[[], Iterable[tuple[AnyEffect, ...]]],
    ) -> State:
        """The state in the materialized rows (:data:`controller.journal.restore.STATE_QUERIES`).

        ``locks`` gives the effects of each applied lock row, in order. Raises ValueError on a
        row that holds something the encoders never wrote.
        """

    def snapshot_text(self, state: State) -> str:
        """The state's snapshot: one canonical text, whose SHA-256 a checkpoint signs."""

    def state_from_text(self, text: str) -> State:
        """The inverse of :meth:`snapshot_text`; raises ValueError on a text it cannot read."""

    def state_digest(self, state: State) -> str:
        """The SHA-256 (hex) of the state's snapshot: :func:`..chain.text_digest` of its text."""

    def differences(self, stored: State, replayed: State) -> list[str]:
        """What differs between two states, value by value (the stored state's first)."""

    def state_problems(self, replayed: State, stored: State) -> list[str]:
        """Each part of the stored state that differs from the replay, and what does not add up."""

    def unbalanced(self, state: State) -> list[str]:
        """A problem for each part of the state whose money does not add up to the cent."""

    def meters(self, state: State) -> dict[str, int]:
        """Each pool's meter in whole cents, as ``verify`` reports them."""

    def pending_rows(self, state: State) -> dict[str, dict[str, Any]]:
        """Each payout awaiting verification, by id, as its ``payouts`` row holds it."""
