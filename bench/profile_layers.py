"""py-spy's samples of the daemon, counted by the layer of the controller they were taken in.

bench/profile.py records ``py-spy record --format raw``: one line a distinct stack, its frames
from the thread's root to the running function (``function (file:line)``, the file named from
its package), then how many samples caught it. :func:`read_raw` reads that; :func:`by_layer`
puts each stack in one layer of :data:`LAYERS` (docs/benchmarks.md, "Where an event's time
goes"), and :func:`by_phase` each start-up stack in one phase of :data:`PHASES`. A sample
caught waiting (:data:`WAITS`) is no CPU and is counted apart; the main thread's samples (the
event loop) and the other threads' (the commit thread, executors) are kept apart, so that
each share is of the CPU its own threads spent (bench/profile.py).

A stack belongs to the **first** layer of the list that any of its frames is in, wherever in
the stack: so the ledger's work under the journal's append is the ledger's, a row looked up
by id to find a resend is the identity check's although the query is the rows' code, and a
signature made while the sequencer signs a head is the signatures', not the sequencer's. What
no layer claims is "other". A layer is named by module prefixes (a file, or a folder ending in
``/``) and, where a module does two jobs, by function (``file:function``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class Layer:
    """A part of the controller, by the modules (or functions) whose frames are its."""

    name: str
    prefixes: tuple[str, ...]

    def claims(self, frame: Frame) -> bool:
        """Whether a frame runs this layer's code."""
        return any(frame.matches(prefix) for prefix in self.prefixes)


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a sample: its function and its file, as py-spy names them."""

    function: str
    file: str

    @classmethod
    def parse(cls, text: str) -> Frame:
        """``function (file:line)``; a frame without a file is its text."""
        function, _, rest = text.partition(" (")
        return cls(function, rest.rsplit(":", 1)[0] if rest else "")

    def matches(self, prefix: str) -> bool:
        """``file:function`` names a function of a file; a prefix names files."""
        if ":" in prefix:
            file, _, function = prefix.partition(":")
            return self.file == file and self.function == function
        return self.file.startswith(prefix)


LAYERS: Final = (
    Layer(
        "signatures (signed heads, agents', meters')",
        (
            "controller/security/",
            "controller/runtime/heads.py",
            "controller/runtime/head_signing.py",
            "controller/runtime/remote_signer.py",
            "controller/journal/high_water.py",
            "controller/agent_signature.py",
            "controller/meter_signature.py",
            "cryptography/",
        ),
    ),
    Layer(
        "checkpoints",
        (
            "controller/runtime/checkpointing.py",
            "controller/journal/checkpoints.py",
            "controller/journal/checkpoint_audit.py",
        ),
    ),
    Layer("hash chain", ("controller/journal/chain.py", "hashlib.py")),
    Layer(
        "identity and sequence checks",
        (
            "controller/journal/sqlite/store.py:Journal._known",
            "controller/journal/identity.py",
            "controller/journal/devices.py",
            "controller/runtime/device_sequences.py",
        ),
    ),
    Layer(
        "commit (the commit thread, SQLite's COMMIT)",
        (
            "controller/runtime/commit_thread.py",
            "controller/journal/sqlite/transaction.py",
            "concurrent/futures/",
            "threading.py",
        ),
    ),
    Layer("journal rows (encode, upsert, materialize)", ("controller/ledger/codec.py",)),
    Layer("ledger (apply, rules)", ("controller/ledger/", "controller/rules/")),
    Layer(
        "decode (payloads, topics, events)",
        (
            "drivers/mqtt/payloads.py",
            "drivers/mqtt/topics.py",
            "drivers/serial/protocol.py",
            "msgspec/",
            "json/",
        ),
    ),
    Layer(
        "publish (broadcast, outbox, meters out)",
        (
            "controller/runtime/broadcast.py",
            "controller/runtime/updates.py",
            "controller/journal/sqlite/outbox.py",
            "drivers/mqtt/sink.py",
            "drivers/signs/",
        ),
    ),
    Layer(
        "journal rows (encode, upsert, materialize)",
        ("controller/journal/", "sqlite_utils/", "sqlite3/"),
    ),
    Layer(
        "web and metrics",
        (
            "controller/web/",
            "controller/runtime/metrics.py",
            "controller/runtime/metric_labels.py",
            "controller/runtime/safeguard_metrics.py",
            "aiohttp/",
            "prometheus_client/",
        ),
    ),
    Layer("mqtt driver and client (aiomqtt, paho)", ("drivers/mqtt/", "aiomqtt/", "paho/")),
    Layer("sequencer (its own code) and runtime", ("controller/runtime/",)),
    Layer("simulated devices", ("drivers/simulator",)),
    Layer("asyncio (the event loop)", ("asyncio/", "selectors.py")),
    Layer("the rig (bench/, in isolation only)", ("profile.py", "durability.py", "heads.py")),
)
"""The layers, first claim first (see the module docstring); a name may appear twice."""

PHASES: Final = (
    Layer("self-check: hashing the installed files", ("controller/security/",)),
    Layer(
        "imports, compiled from source",
        ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>"),
    ),
    Layer(
        "the approval's check before the .pth lines run",
        ("controller/cli/launch.py:matches_approval",),
    ),
    Layer(
        "the journal's state checked by replay",
        (
            "controller/journal/state_check.py",
            "controller/journal/sqlite/state_check.py",
            "controller/journal/state_trust.py",
        ),
    ),
    Layer("checkpoints resumed, one sealed", ("controller/runtime/checkpointing.py",)),
    Layer(
        "the journal opened, its state restored",
        ("controller/journal/sqlite/store.py:Journal.__init__", "controller/journal/restore.py"),
    ),
    Layer("configuration loaded", ("controller/config/",)),
    Layer("drivers and simulated tables started", ("drivers/",)),
    Layer("the rest of the service's start", ("controller/",)),
)
"""Where start-up's samples go, first claim first: an import made while loading the
configuration is the imports'; the configuration's own work is the configuration's."""

OTHER: Final = "other"
WAITS: Final = (
    "selectors.py:EpollSelector.select",
    "selectors.py:DefaultSelector.select",
    "concurrent/futures/thread.py:_worker",
    "threading.py:Condition.wait",
    "threading.py:Event.wait",
    "queue.py:Queue.get",
)
"""Where a thread that py-spy saw running waits: the loop's poll, an idle executor's queue.

py-spy counts a thread that is runnable as active, and on a full machine a thread that has
just been woken waits its turn for a core in these calls: such samples are no CPU, and are
left out of the shares (counted apart, as waiting)."""
THREAD_ROOT: Final = "threading.py:Thread._bootstrap"
"""The root frame of every thread but the main one (the daemon's event loop)."""


def read_raw(path: Path) -> list[tuple[tuple[Frame, ...], int]]:
    """The stacks of a ``py-spy record --format raw`` file, each with its sample count."""
    stacks = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        text, _, count = line.rpartition(" ")
        if text and count.isdigit():
            stacks.append((tuple(Frame.parse(frame) for frame in text.split(";")), int(count)))
    return stacks


def layer_of(stack: Sequence[Frame], layers: Sequence[Layer]) -> str:
    """The first layer that claims any frame of the stack, or :data:`OTHER`."""
    for layer in layers:
        if any(layer.claims(frame) for frame in stack):
            return layer.name
    return OTHER


def tally(
    stacks: Iterable[tuple[Sequence[Frame], int]], layers: Sequence[Layer] = LAYERS
) -> Counter[str]:
    """Samples by layer."""
    counts: Counter[str] = Counter()
    for stack, count in stacks:
        counts[layer_of(stack, layers)] += count
    return counts


def waiting(stack: Sequence[Frame]) -> bool:
    """Whether the running frame is one of :data:`WAITS`."""
    return bool(stack) and any(stack[-1].matches(wait) for wait in WAITS)


def main_thread(stack: Sequence[Frame]) -> bool:
    """Whether a stack is the main thread's (its root is not a thread's bootstrap)."""
    return not (stack and stack[0].matches(THREAD_ROOT))


@dataclass(frozen=True, slots=True)
class Split:
    """A recording's working samples by layer, the main thread's and the other threads'."""

    main: Counter[str]
    others: Counter[str]
    waits: int

    @property
    def working(self) -> int:
        """Samples that were not waiting."""
        return sum(self.main.values()) + sum(self.others.values())


def by_layer(path: Path) -> Split:
    """A recording's samples by the layers of an event's way (:data:`LAYERS`), by thread."""
    main: list[tuple[tuple[Frame, ...], int]] = []
    others: list[tuple[tuple[Frame, ...], int]] = []
    waits = 0
    for stack, count in read_raw(path):
        if waiting(stack):
            waits += count
        else:
            (main if main_thread(stack) else others).append((stack, count))
    return Split(tally(main, LAYERS), tally(others, LAYERS), waits)


def by_phase(path: Path) -> Counter[str]:
    """A start-up recording's working samples by phase (:data:`PHASES`)."""
    return tally(((stack, n) for stack, n in read_raw(path) if not waiting(stack)), PHASES)


def hottest(path: Path, count: int = 15) -> list[tuple[str, int]]:
    """The functions most working samples were running in (their own code, not callees')."""
    running: Counter[str] = Counter()
    for stack, samples in read_raw(path):
        if stack and not waiting(stack):
            running[f"{stack[-1].file}:{stack[-1].function}"] += samples
    return running.most_common(count)
