"""What the sequencer counts, for the metrics exporter (controller/runtime/metrics.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class SequencerStats:
    """Counters the metrics exporter reads."""

    events: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    commits: int = 0
    commit_seconds: list[float] = field(default_factory=list)
    queue_to_commit_seconds: list[float] = field(default_factory=list)
    held_rounds: int = 0
    journal_failures: int = 0
    conflicts: Counter[str] = field(default_factory=Counter)
    """Events refused for reusing an id with other content, by table."""
    gaps: Counter[str] = field(default_factory=Counter)
    """Gaps in a device's sequence numbers journaled, by table."""
    lost_events: Counter[str] = field(default_factory=Counter)
    """Events those gaps left out, by table."""
    rejections_left_out: int = 0
    """Rejections counted but not journaled one by one (a flood; see RejectionLimit)."""
    internal_errors: int = 0
    """Events the controller failed on (a fault of its own), left unrecorded."""

    def drain_latencies(self) -> tuple[list[float], list[float]]:
        """The latencies observed since the last call (for histograms)."""
        commits, waits = self.commit_seconds, self.queue_to_commit_seconds
        self.commit_seconds, self.queue_to_commit_seconds = [], []
        return commits, waits
