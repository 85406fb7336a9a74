"""The one root of every error the controller and its drivers raise on purpose.

Callers that only need to know "this is ours, report it" catch :class:`JackpotError` (the
command line does); callers that handle one kind catch its family or the class itself. Each
class keeps the builtin base it had before (``ValueError``, ``RuntimeError``...), so code
that catches those keeps working. Where an error is translated from another, the cause is
chained (``raise ... from error``). docs/architecture.md, "Errors", lists the families.
"""

from __future__ import annotations


class JackpotError(Exception):
    """Any error the controller or a driver raises on purpose."""


class RefusedError(JackpotError):
    """The ledger refuses an event or an operation; nothing changes, no meter moves."""


class InputError(JackpotError):
    """Input that is not what it claims: a payload, frame, card code, amount, key or PIN."""


class ConfigurationError(JackpotError):
    """A configuration, paytable or setting the controller cannot run with."""


class UnavailableError(JackpotError):
    """A part the controller needs cannot be reached or written now; nothing was recorded."""
