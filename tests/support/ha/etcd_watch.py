"""Patroni's state as etcd holds it, and a watch that wakes on each change of it.

Patroni keeps the cluster in etcd under ``<namespace><scope>/``: ``leader`` (the name of the
node holding the leader key, a lease of ``ttl`` seconds), ``sync`` (``{"leader": ...,
"sync_standby": ...}``: who the primary replicates to synchronously) and ``members/<name>``
(each node's role and state, rewritten by that node every ``loop_wait``). :func:`read_state`
reads them through etcd's v3 JSON gateway; :class:`Watch` is a v3 watch on the same prefix, so
a test waits for a state on the change that brings it, with a deadline, instead of polling.
"""

from __future__ import annotations

import base64
import http.client
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from types import TracebackType

REQUEST_TIMEOUT_S = 5.0


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _prefix_end(prefix: str) -> str:
    """The end of etcd's range that holds every key starting with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


@dataclass(frozen=True)
class Member:
    """One Patroni node as it last wrote itself into etcd."""

    name: str
    role: str
    state: str
    timeline: int | None

    @property
    def primary(self) -> bool:
        """Whether it runs as the primary (Patroni 3 writes "primary"; 2 wrote "master")."""
        return self.role in {"primary", "master"}


@dataclass(frozen=True)
class ClusterState:
    """The leader key, the synchronous standby and the members, read at one revision."""

    leader: str | None
    sync_standby: str | None
    members: dict[str, Member] = field(default_factory=dict)

    def running(self) -> set[str]:
        """The members whose PostgreSQL runs."""
        return {name for name, member in self.members.items() if member.state == "running"}

    def primary(self) -> str | None:
        """The node that holds the leader key and runs as the primary, if one does."""
        member = self.members.get(self.leader or "")
        return member.name if member is not None and member.primary else None

    def healthy(self, expected: int) -> bool:
        """A running primary, a running synchronous standby, ``expected`` members running."""
        return (
            self.primary() is not None
            and self.sync_standby is not None
            and self.sync_standby in self.running()
            and len(self.running()) == expected
        )


def _call(host: str, port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    connection = http.client.HTTPConnection(host, port, timeout=REQUEST_TIMEOUT_S)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer: dict[str, Any] = json.loads(response.read())
    finally:
        connection.close()
    return answer


def read_state(host: str, port: int, prefix: str) -> ClusterState:
    """Patroni's keys under ``prefix`` (``/service/<scope>/``), read from one etcd member."""
    answer = _call(
        host, port, "/v3/kv/range", {"key": _b64(prefix), "range_end": _b64(_prefix_end(prefix))}
    )
    values = {
        base64.b64decode(kv["key"]).decode()[len(prefix) :]: base64.b64decode(kv.get("value", ""))
        for kv in answer.get("kvs", [])
    }
    members = {}
    for key, value in values.items():
        if key.startswith("members/"):
            data = json.loads(value)
            name = key.removeprefix("members/")
            members[name] = Member(
                name, data.get("role", ""), data.get("state", ""), data.get("timeline")
            )
    sync = json.loads(values["sync"]) if values.get("sync") else {}
    leader = values["leader"].decode() if "leader" in values else None
    return ClusterState(leader, sync.get("sync_standby"), members)


class WatchEndedError(ConnectionError):
    """The etcd member a watch was on closed it (it stopped, or was killed)."""


class Watch:
    """An etcd v3 watch on a prefix: :meth:`wait` returns at its next change or a deadline."""

    def __init__(self, host: str, port: int, prefix: str) -> None:
        self._connection = http.client.HTTPConnection(host, port, timeout=REQUEST_TIMEOUT_S)
        request = {"create_request": {"key": _b64(prefix), "range_end": _b64(_prefix_end(prefix))}}
        self._connection.request("POST", "/v3/watch", json.dumps(request))
        self._response = self._connection.getresponse()
        # The gateway answers at once that the watch is made; changes follow, one line each.
        self._response.readline()

    def wait(self, seconds: float) -> bool:
        """Whether a change came within ``seconds``; :class:`WatchEndedError` if etcd went away."""
        sock = self._connection.sock
        if sock is None:
            raise WatchEndedError
        if seconds <= 0:
            return False
        sock.settimeout(seconds)
        try:
            line = self._response.readline()
        except TimeoutError:
            return False
        except OSError as error:
            raise WatchEndedError from error
        if not line:
            raise WatchEndedError
        return True

    def close(self) -> None:
        """End the watch."""
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def remaining(deadline: float) -> float:
    """Seconds left until ``deadline`` (a ``time.monotonic`` value)."""
    return deadline - time.monotonic()
