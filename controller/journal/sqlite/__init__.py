"""The SQLite backend: a journal in one file, one transaction per group commit.

:class:`Journal` (:mod:`.store`) appends and restores; :mod:`.schema` migrates the file,
:mod:`.transaction` commits a prepared append in the sequencer's commit thread,
:mod:`.verify` is ``jackpotd verify`` of a file, :mod:`.state_check` the start-up check over
its rows, :mod:`.file_archive` cuts its old rows to segments, :mod:`.outbox` and
:mod:`.agent_outbox` keep a sink's and a table agent's messages, :mod:`.backend` is what
:func:`controller.journal.backends.backend_for` opens for a file's path. What every backend
shares (the port, the append policy, the chain, replay and verification) is the package above;
the other backends are its siblings (:mod:`controller.journal.postgres`,
:mod:`controller.journal.memory`).
"""

from controller.journal.sqlite import lean  # noqa: F401 - first: sqlite_utils without numpy
from controller.journal.sqlite.store import Journal

__all__ = ["Journal"]
