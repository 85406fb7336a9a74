"""How a command ends: its exit status, and the one line that says why.

=====  =====================================================================================
 0     done
 1     bad input or a refusal: every :class:`JackpotError` (controller/errors.py), and a file
       or a socket the system refused (an ``OSError``), each one line ``jackpotd: ...``
 2     a usage error (argparse prints the usage and the message)
 70    a bug (``EX_SOFTWARE`` of sysexits.h): any other exception, said in one line with a
       hint; its traceback under ``--debug``, or in the log when the service logs
 74    the service's ``COMMIT`` hung past ``commit_hang_s`` (controller/runtime/step_down.py)
 75    fenced (``EX_TEMPFAIL``): another controller node took the sequencer over from this
       one; the supervisor starts it again, and it stands by (docs/ha.md, "A warm standby").
       (A node that finds the fence held at start does not exit: it stands by.)
 130   interrupted (Ctrl-C)
 141   the reader of the output went away (``jackpotd hits | head``): nothing said, as other
       Unix tools end there (128 + SIGPIPE)
=====  =====================================================================================
"""

from __future__ import annotations

import logging
import os
import select
import sys
import traceback
from typing import Final

from controller.errors import JackpotError
from controller.journal.errors import FencedError
from controller.runtime.logsafe import escape_control
from controller.runtime.step_down import FENCED

OK: Final = 0
INPUT: Final = 1
USAGE: Final = 2
SOFTWARE: Final = 70
INTERRUPTED: Final = 130
PIPE_CLOSED: Final = 141

log = logging.getLogger("controller.cli")


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions an exception group holds (a TaskGroup's), or ``error`` itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def expected(error: BaseException) -> bool:
    """Whether ``error`` is bad input or a refusal, rather than a bug."""
    return isinstance(error, JackpotError | OSError)


def message(error: BaseException) -> str:
    """The one line that says what went wrong, without ``jackpotd: ``."""
    if isinstance(error, OSError) and not isinstance(error, JackpotError) and error.strerror:
        names = [str(name) for name in (error.filename, error.filename2) if name is not None]
        return inert(": ".join([*names, error.strerror]))
    return inert(str(error) or type(error).__name__)


def inert(text: str) -> str:
    """``text`` safe for an operator's terminal: every control character escaped but newlines.

    An error quotes what it refused (a key file's owner, an id, a path), and a terminal obeys
    an escape sequence in it (a title set, a line rewritten): docs/security.md, "Identifiers
    are one line of text". A message of several lines keeps them.
    """
    return "\n".join(escape_control(line) for line in text.split("\n"))


def _output_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll says POLLERR)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _silence_output() -> None:
    """Point standard output at /dev/null, so that the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def report(error: BaseException, *, debug: bool, logged: bool = False) -> int:
    """Say why the command failed, on stderr, and return its exit status.

    ``logged``: the command logs (the service, the demo), so a bug's traceback goes to the log.
    """
    found = leaves(error)
    if any(isinstance(leaf, BrokenPipeError) for leaf in found) and _output_closed():
        _silence_output()
        return PIPE_CLOSED
    if any(isinstance(leaf, KeyboardInterrupt) for leaf in found):
        print("jackpotd: interrupted", file=sys.stderr)
        return INTERRUPTED
    bugs = [leaf for leaf in found if not expected(leaf)]
    if not bugs:
        for leaf in found:
            print(f"jackpotd: {message(leaf)}", file=sys.stderr)
        # A node refused the sequencer is no input error: its supervisor tries it again.
        return FENCED if any(isinstance(leaf, FencedError) for leaf in found) else INPUT
    bug = bugs[0]
    if debug:
        traceback.print_exception(error, file=sys.stderr)
        where = "above"
    elif logged:
        log.critical("internal error", exc_info=error)
        where = "in the log"
    else:
        where = "shown by jackpotd --debug COMMAND ..."
    print(f"jackpotd: internal error: {type(bug).__name__}: {inert(str(bug))}", file=sys.stderr)
    print(
        f"jackpotd: this is a bug; please report it with its traceback ({where})", file=sys.stderr
    )
    return SOFTWARE
