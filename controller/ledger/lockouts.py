"""Lockouts on a journal with an identity: the operator's own key, timed, never the last manager.

A wrong passphrase at the command line is journaled as ``authentication-failed``, and anyone who
can append to the journal can write such a row. So on a journal with an identity (the journals
this version founds: :func:`has_identity`) the ledger holds lockouts to three rules
(docs/security.md, "Lockouts"):

* **The operator's own key.** A failure counts only if the key file of the attempt carries the
  public key enrolled for the operator (key files carry it in the clear). A row without it, or
  with another key (a key file someone made under a manager's name), is refused, journaled as
  refused, and counts nothing.
* **Lockouts expire, with back-off.** ``lockout_after`` failures lock the operator out for
  :data:`FIRST_LOCKOUT`, each further lockout since they last signed for twice as long, up to
  :data:`LONGEST_LOCKOUT`. The ledger has no clock of its own: a lockout is a *window of event
  time*, from the failure that made it, and it refuses the operator's signed events dated in
  it. A row's time is whatever its writer wrote, so the windows are chosen so that no forged
  time helps: a failure dated in the future makes a window in the future, which binds nothing
  dated now (it cannot lengthen a lockout); one dated in the past, a window in the past; a
  failure dated inside a standing window counts nothing (it cannot stretch it); and no failure
  ends or moves a window that stands (it cannot shorten one). Windows stand until the
  operator's next accepted signature (dated outside all of them: they proved they hold the key
  and its passphrase) or a manager's unlock; at most :data:`MOST_STANDING` stand at once, and
  failures beyond that are counted and alerted but make none.
* **Never the last manager.** A failure never locks out a manager when no other manager with
  a key is free of lockouts: whoever appends rows, the floor keeps a manager who can sign,
  unlock the others and approve.

A journal without an identity (written before identities existed) counts every row by name
and locks out until a manager unlocks, as it was written, so that it replays exactly.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

import msgspec

from controller.clock import utc_iso
from controller.ledger.binding import moment_of
from controller.ledger.operators import Lockouts, Role
from controller.ledger.state import LedgerError

if TYPE_CHECKING:
    from controller.events import AuthenticationFailed
    from controller.ledger.operators import Operator
    from controller.ledger.state import LedgerState

FIRST_LOCKOUT: Final = timedelta(minutes=5)
"""How long the first lockout since an operator last signed lasts; each next one twice that."""
LONGEST_LOCKOUT: Final = timedelta(hours=1)
"""The cap of the back-off: long enough that guessing at the command line is pointless, short
enough that a shift is not lost."""
MOST_STANDING: Final = 8
"""Lockout windows that may stand at once for one operator (rows cannot grow the state)."""


def has_identity(state: LedgerState) -> bool:
    """Whether the journal has an identity, named by its founding manager's signature.

    Every journal this version founds has one (controller/ledger/binding.py) and no journal
    written before identities existed does, nor can a row appended later give or take one. So
    it is the mark of the authority rules of this version: lockouts by the operator's own key,
    timed; one operator per key; two managers to enroll once there are two; no Envy on the
    dealer's hand (:mod:`controller.ledger.table_rules`).
    """
    return state.binding is not None


def lockouts_of(state: LedgerState, name: str) -> Lockouts:
    """``name``'s lockouts (none standing, none counted, if they have no record)."""
    lockouts = state.authority.lockouts
    if isinstance(lockouts, msgspec.UnsetType):
        return Lockouts()
    return lockouts.get(name, Lockouts())


def locked_until(state: LedgerState, name: str, at: datetime) -> str | None:
    """The end of ``name``'s standing lockout window holding the time ``at``, or None."""
    for start, end in lockouts_of(state, name).windows:
        if datetime.fromisoformat(start) <= at < datetime.fromisoformat(end):
            return end
    return None


def lockout_length(count: int) -> timedelta:
    """How long the ``count``-th lockout since the operator last signed lasts."""
    doubled: timedelta = FIRST_LOCKOUT * 2 ** min(count - 1, 16)
    return min(doubled, LONGEST_LOCKOUT)


def _with_lockouts(state: LedgerState, changes: dict[str, Lockouts | None]) -> LedgerState:
    """The state with some operators' lockout records replaced (None: dropped)."""
    current = state.authority.lockouts
    records = {} if isinstance(current, msgspec.UnsetType) else dict(current)
    for name, record in changes.items():
        if record is None or record == Lockouts():
            records.pop(name, None)
        else:
            records[name] = record
    # Empty: UNSET again, so that the snapshot is the one it would have been without lockouts.
    kept: dict[str, Lockouts] | msgspec.UnsetType = records or msgspec.UNSET
    return replace(state, authority=replace(state.authority, lockouts=kept))


def _last_free_manager(state: LedgerState, operator: Operator) -> bool:
    """Whether ``operator`` is a manager and no other manager with a key is free of lockouts."""
    if operator.role is not Role.MANAGER:
        return False
    return not any(
        other.role is Role.MANAGER and other.public_key and not other.locked
        for other in state.operators.values()
        if other.name != operator.name
    )


def count_failure(
    state: LedgerState, operator: Operator, event: AuthenticationFailed
) -> tuple[LedgerState, bool]:
    """One failed authentication on a journal with an identity; the state and whether it locked."""
    name = operator.name
    if isinstance(event.public_key, msgspec.UnsetType) or not event.public_key:
        raise LedgerError(
            f"authentication-failed: no public key of the attempt's key file, so it counts "
            f"nothing against {name}"
        )
    if event.public_key != operator.public_key:
        raise LedgerError(
            f"authentication-failed: the attempt's key file is not {name}'s enrolled key "
            "(someone else's key, or one made under their name); it counts nothing"
        )
    at = moment_of(event.at, "authentication-failed: its time")
    if locked_until(state, name, at) is not None:
        return state, False  # inside a standing lockout: it can neither stretch nor end it
    failures = operator.failures + 1
    record = lockouts_of(state, name)
    locks = (
        failures - record.failures_before >= state.authority.lockout_after
        and not _last_free_manager(state, operator)
        and len(record.windows) < MOST_STANDING
    )
    if not locks:
        changed = replace(operator, failures=failures)
        return replace(state, operators={**state.operators, name: changed}), False
    count = record.count + 1
    window = (utc_iso(at), utc_iso(at + lockout_length(count)))
    state = _with_lockouts(state, {name: Lockouts(count, (*record.windows, window), failures)})
    changed = replace(operator, failures=failures, locked=True)
    return replace(state, operators={**state.operators, name: changed}), True


def cleared(state: LedgerState, names: list[str]) -> LedgerState:
    """The state after ``names`` signed an accepted event: their lockouts and count are over."""
    if not any(lockouts_of(state, name) != Lockouts() for name in names):
        return state
    return _with_lockouts(state, dict.fromkeys(names))


def lifted(state: LedgerState, name: str) -> LedgerState:
    """The state after a manager unlocked ``name``: no window stands; the back-off goes on.

    The unlock starts their failures again from zero (as it always did), and so the count
    toward the next lockout.
    """
    record = lockouts_of(state, name)
    return _with_lockouts(state, {name: Lockouts(record.count)})


def retired(state: LedgerState, name: str) -> LedgerState:
    """The state after ``name`` was revoked: their lockouts dropped, their key never again."""
    state = _with_lockouts(state, {name: None})
    key = state.operators[name].public_key if name in state.operators else ""
    current = state.authority.retired_keys
    keys = () if isinstance(current, msgspec.UnsetType) else current
    if not key or key in keys:
        return state
    return replace(state, authority=replace(state.authority, retired_keys=(*keys, key)))


def key_taken(state: LedgerState, public_key: str) -> str | None:
    """Who holds or held ``public_key``: an operator's name, "a revoked operator", or None.

    A table's agent holds a key too (controller/ledger/table_agents.py): "the agent of T1".
    """
    for operator in state.operators.values():
        if operator.public_key == public_key:
            return operator.name
    agents = state.authority.table_agents
    for table_id, agent in ({} if isinstance(agents, msgspec.UnsetType) else agents).items():
        if agent.public_key == public_key:
            return f"the agent of table {table_id}"
    retired_keys = state.authority.retired_keys
    if not isinstance(retired_keys, msgspec.UnsetType) and public_key in retired_keys:
        return "a revoked operator"
    return None
