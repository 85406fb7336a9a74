"""The journal's errors, in a module of their own so that every journal module can raise them."""

from controller.errors import JackpotError


class JournalError(JackpotError, RuntimeError):
    """The journal cannot be opened or written, or its contents do not add up."""


class SchemaError(JournalError):
    """The database's schema version is one this controller does not know."""
