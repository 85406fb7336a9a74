"""The one reconnect loop (controller/backoff.py): every driver and the service's parts use it.

A link that cannot open is retried after the backoff delay; one that fails while open is
reopened and counted as a reconnection; an error the link does not name as a connection's
failure (a bug, a configuration error) ends the loop instead of spinning on it. The backoff
restarts only when the link says so on opening.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from controller.backoff import Backoff, keep_connected, retrying
from controller.service.wiring import supervise

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class BugError(Exception):
    """Not a connection's failure."""


@dataclass
class ScriptedLink:
    """Each attempt does what the script says: refuse to open, fail once open, or a bug."""

    script: list[str]
    name: str = "scripted"
    connected: bool = False
    reconnects: int = 0
    failures: list[str] = field(default_factory=list)
    seen_connected: list[bool] = field(default_factory=list)
    opened_count: int = 0
    backoff: Backoff = field(default_factory=lambda: Backoff(0, 0, jitter=False))

    @contextlib.asynccontextmanager
    async def open_session(self) -> AsyncIterator[str]:
        """Open, or refuse to."""
        step = self.script.pop(0)
        if step == "refuse":
            raise OSError("no such device")
        yield step

    async def use_session(self, session: str) -> None:
        """Fail as scripted once open."""
        self.seen_connected.append(self.connected)
        if session == "drop":
            raise EOFError("the line closed")
        raise BugError(session)

    def session_opened(self) -> None:
        """Count the opening; the backoff restarts."""
        self.opened_count += 1
        self.backoff.reset()

    def failure_of(self, error: Exception, *, opened: bool) -> str | None:
        """What the serial drivers say."""
        if isinstance(error, OSError) and not opened:
            return "cannot open"
        return "port failed" if isinstance(error, EOFError) else None

    def failed(self, what: str, error: Exception) -> None:
        """Record it."""
        self.failures.append(f"{what}: {error}")


def test_failures_are_retried_and_reopenings_counted_until_a_bug_ends_the_loop() -> None:
    link = ScriptedLink(["refuse", "refuse", "drop", "drop", "a bug"])
    with pytest.raises(BugError, match="a bug"):
        asyncio.run(keep_connected(link, link.backoff))
    assert link.failures == [
        "cannot open: no such device",
        "cannot open: no such device",
        "port failed: the line closed",
        "port failed: the line closed",
    ]
    assert link.seen_connected == [True, True, True]
    assert (link.connected, link.opened_count, link.reconnects) == (False, 3, 2)


def test_the_backoff_grows_while_opening_fails_and_restarts_once_open() -> None:
    link = ScriptedLink(["refuse", "refuse", "refuse", "a bug"])
    with pytest.raises(BugError):
        asyncio.run(keep_connected(link, link.backoff))
    assert link.backoff.failures == 0  # reset on opening, after three delays
    refused = ScriptedLink(["refuse", "refuse", "refuse"])
    with pytest.raises(IndexError):  # the script ran out: the fourth attempt came
        asyncio.run(keep_connected(refused, refused.backoff))
    assert refused.backoff.failures == 3


def test_a_supervised_part_that_fails_or_ends_is_started_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    starts: list[int] = []
    third = asyncio.Event()

    async def part() -> None:
        starts.append(len(starts))
        if len(starts) == 1:
            raise RuntimeError("first start fails")
        if len(starts) == 3:
            third.set()
            await asyncio.Event().wait()  # runs until cancelled

    async def scenario() -> None:
        task = asyncio.create_task(supervise("part", part, Backoff(0, 0, jitter=False)))
        async with asyncio.timeout(10):
            await third.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert starts == [0, 1, 2]
    messages = [record.getMessage() for record in caplog.records]
    assert "part failed; restarting" in messages
    assert "part stopped; restarting" in messages


class UnreachableError(Exception):
    """The one failure the retried operation names as worth another try."""


def test_one_operation_is_retried_until_it_succeeds_and_a_bug_is_not_retried() -> None:
    outcomes: list[str] = ["unreachable", "unreachable", "done"]
    seen: list[str] = []
    backoff = Backoff(initial=0.001, cap=0.002, jitter=False)

    async def operation() -> str:
        outcome = outcomes.pop(0)
        if outcome == "unreachable":
            raise UnreachableError(outcome)
        if outcome == "a bug":
            raise BugError(outcome)
        return outcome

    result = asyncio.run(
        retrying(
            operation, backoff, retry_on=UnreachableError, failed=lambda e: seen.append(str(e))
        )
    )
    assert (result, seen, backoff.failures) == ("done", ["unreachable", "unreachable"], 0)
    outcomes[:] = ["unreachable", "a bug", "done"]
    with pytest.raises(BugError):
        asyncio.run(retrying(operation, backoff, retry_on=UnreachableError))
    assert outcomes == ["done"]


def test_a_stop_ends_the_retries_within_the_wait_and_answers_none() -> None:
    attempts: list[int] = []

    async def stopped_while_waiting() -> str | None:
        stop = asyncio.Event()

        async def operation() -> str:
            attempts.append(len(attempts))
            asyncio.get_running_loop().call_soon(stop.set)
            raise UnreachableError

        # A delay of an hour: only the stop can end the wait.
        backoff = Backoff(initial=3600.0, cap=3600.0, jitter=False)
        return await asyncio.wait_for(
            retrying(operation, backoff, retry_on=UnreachableError, stop=stop), 10
        )

    assert asyncio.run(stopped_while_waiting()) is None
    assert attempts == [0]
