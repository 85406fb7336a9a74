"""The metrics of the controller's safeguards: clock steps, authentications, passkeys, checkpoints.

What someone tampering with the host, the operators' keys or the journal file would want
unseen (docs/security.md, docs/faults.md): Prometheus keeps their history where whoever
writes the journal file cannot reach it. Part of the families :mod:`controller.runtime.metrics`
builds at each scrape (docs/metrics.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from controller.ledger.passkeys import passkeys_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

    from controller.ledger.state import LedgerState
    from controller.runtime.checkpointing import CheckpointSchedule
    from controller.runtime.clock_watch import ClockWatch


def clock_steps(watch: ClockWatch) -> Metric:
    """Steps of the wall clock, each direction from the start."""
    steps = CounterMetricFamily(
        "jackpotd_clock_steps",
        "Steps of the wall clock that dates events, journaled as clock-step faults.",
        labels=["direction"],
    )
    for direction, count in sorted(watch.steps.items()):
        steps.add_metric([direction], count)
    return steps


def authentications(state: LedgerState) -> Iterator[Metric]:
    """Wrong passphrases and the lockouts they cause (docs/security.md), from the ledger.

    The command line journals its failed attempts itself; the controller takes in what
    another process journaled at its next write, so they count here as well.
    """
    operators = state.operators.values()
    locked = GaugeMetricFamily(
        "jackpotd_operators_locked_out",
        "Operators locked out after failed authentications, until a manager unlocks them.",
    )
    locked.add_metric([], sum(operator.locked for operator in operators))
    failures = GaugeMetricFamily(
        "jackpotd_operator_failed_authentications",
        "Failed authentications in a row, over all operators (a signed action resets them).",
    )
    failures.add_metric([], sum(operator.failures for operator in operators))
    yield from (locked, failures)


def passkey_clones(state: LedgerState) -> Metric:
    """Passkeys held as suspected cloned (docs/security.md, "Passkeys"), from the ledger.

    Each was held on the proof of one of its assertions whose sign count went back, journaled
    right after the refused action; it stays counted until a manager revokes it.
    """
    held = GaugeMetricFamily(
        "jackpotd_passkeys_clone_suspected",
        "Passkeys whose sign count went back (a cloned authenticator), not yet revoked.",
    )
    suspected = [
        passkey
        for passkey in passkeys_of(state).values()
        if passkey.clone_suspected is not None and not passkey.revoked
    ]
    held.add_metric([], len(suspected))
    return held


def checkpoints(schedule: CheckpointSchedule | None) -> Iterator[Metric]:
    """The last signed checkpoint: what an attacker with the journal file cannot rewrite."""
    last = schedule.last if schedule is not None else None
    seq = GaugeMetricFamily(
        "jackpotd_checkpoint_seq",
        "The journal row the last signed checkpoint covers (0 before the first).",
    )
    seq.add_metric([], last.event.head_seq if last is not None else 0)
    when = GaugeMetricFamily(
        "jackpotd_checkpoint_timestamp_seconds",
        "When the last signed checkpoint was made (Unix time; 0 before the first).",
    )
    when.add_metric([], schedule.last_timestamp if schedule is not None else 0.0)
    yield from (seq, when)
