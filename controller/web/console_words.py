"""The console's refusals in plain words: what the ledger said, and what it means at the table.

The ledger's reason is kept beside it, word for word (it is what the journal holds); the plain
sentence says what happened and that nothing moved, so that a supervisor at a tablet knows
whether to try again, call a manager, or stop.
"""

from __future__ import annotations

from typing import Final

NOTHING_MOVED: Final = "Nothing was paid or changed."
PLAIN: Final = (
    ("passkey-clone", ("This passkey's counter went back: it may have been copied. It is held "
     "until a manager revokes it. Call a manager.")),
    ("was revoked", "This passkey was revoked: it cannot sign. A manager enrolls a new one."),
    ("suspected cloned", "This passkey is held as suspected copied: a manager revokes it."),
    ("may not", "Your role may not do this: a manager signs it."),
    ("no enrolled passkey", "This passkey is not enrolled for you: a manager enrolls it."),
    ("challenge", "This signature was made for another action, not this one."),
    ("client data", "The browser's signed data was changed on the way: the signature is void."),
    ("signature", "The signature does not check out for this action."),
    ("window", "The time to sign this ran out: start again."),
    ("stale", "The pay or table changed since this was drafted: start again."),
    ("applied before", "This action was done already."),
    ("dual control", "This needs a second operator's signature."),
    ("distinct", "This needs a second, different operator's signature."),
)  # fmt: skip


def plain(reason: str) -> str:
    """A refusal in plain words for the supervisor, ending in what did not happen."""
    lowered = reason.lower()
    for word, sentence in PLAIN:
        if word in lowered:
            return f"{sentence} {NOTHING_MOVED}"
    return f"The controller refused it. {NOTHING_MOVED}"
