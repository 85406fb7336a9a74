"""How a sequencer that must not go on stops: the process ends at once, with a status that says why.

Three things end a controller node this way (docs/ha.md, "The fenced sequencer"; the third:
docs/security.md, "History never goes back"):

=====  =====================================================================================
 75    **fenced** (``EX_TEMPFAIL``): another node has taken the sequencer over; this one
       committed nothing since and steps down. Its supervisor starts it again, and it takes
       over only once the other's lease runs out.
 74    **a commit hung** (``EX_IOERR``): a ``COMMIT`` did not return within
       ``[controller] commit_hang_s`` (a synchronous standby that does not answer). It is
       never cancelled: cancelling a commit that waits on replication reports success
       without replication. The process ends instead, nothing of the batch acknowledged, and
       the next start recovers from what the journal holds.
 65    **the journal went back** (``EX_DATAERR``): its head fell below the high-water mark the
       controller signed (the file was replaced under it). Nothing is signed over it; the next
       start refuses the journal, naming the row it lost.
=====  =====================================================================================

The process ends with ``os._exit``, not by unwinding: a hung ``COMMIT`` holds the commit
thread, which an orderly exit would wait for forever. Before, every table is shown CLOSED
(the sequencer fails closed) and the reason is logged and written to standard error.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Final, NoReturn

FENCED: Final = 75
"""Exit status: another node holds the sequencer's fence."""
COMMIT_HUNG: Final = 74
"""Exit status: a ``COMMIT`` did not return within ``commit_hang_s``."""
WENT_BACK: Final = 65
"""Exit status: the journal's head fell below the controller's signed high-water mark."""

log = logging.getLogger(__name__)


def exit_process(status: int, reason: str) -> NoReturn:
    """Log why, flush what was said, and end the process now with ``status``."""
    log.critical("stepping down (exit %d): %s", status, reason)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.write(f"jackpotd: {reason}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(status)
