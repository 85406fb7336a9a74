"""The journal's errors, in a module of their own so that every journal module can raise them."""

from controller.errors import JackpotError


class JournalError(JackpotError, RuntimeError):
    """The journal cannot be opened or written, or its contents do not add up."""


class SchemaError(JournalError):
    """The database's schema version is one this controller does not know."""


class NotAJournalError(JournalError):
    """The location holds no jackpotd journal (another SQLite file or database, or none at all)."""


class FencedError(JournalError):
    """Another controller node holds the sequencer's fence: this one must not write (docs/ha.md).

    Raised when a node's takeover is refused (the holder's lease is live), and when a node
    that held the fence finds, in the transaction of its next commit or lease renewal, that
    another node has taken it over since: it has committed nothing, and steps down.
    """
