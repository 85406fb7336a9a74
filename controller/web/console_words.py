"""The console's refusals in plain words: what the ledger said, and what it means at the table.

The ledger's reason is kept beside it, word for word (it is what the journal holds); the plain
sentence says what happened and that nothing moved, so that a supervisor at a tablet knows
whether to try again, call a manager, or stop. The confirmation of a held round's void says in
the same words what it does: the wagers it returns and the contributions it takes back, to the
fraction of a cent (:func:`void_confirmation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from controller.effects import fraction_text
from controller.money import format_cents

if TYPE_CHECKING:
    from fractions import Fraction

NOTHING_MOVED: Final = "Nothing was paid or changed."
PLAIN: Final = (
    ("not the newest fault", ("Another fault was journaled since this was drafted: look at the "
     "list again and acknowledge through the newest.")),
    ("was acknowledged already", "These faults were acknowledged already."),
    ("passkey-clone", ("This passkey's counter went back: it may have been copied. It is held "
     "until a manager revokes it. Call a manager.")),
    ("was revoked", "This passkey was revoked: it cannot sign. A manager enrolls a new one."),
    ("suspected cloned", "This passkey is held as suspected copied: a manager revokes it."),
    ("may not", "Your role may not do this: a manager signs it."),
    ("no enrolled passkey", "This passkey is not enrolled for you: a manager enrolls it."),
    ("challenge", "This signature was made for another action, not this one."),
    ("client data", "The browser's signed data was changed on the way: the signature is void."),
    ("signature", "The signature does not check out for this action."),
    ("is not open on table", "This round is not open any more: it was voided or settled already."),
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


def exact_amount(cents: Fraction) -> str:
    """Cents to the fraction of a cent: ``$0.28``, or ``$0.09 and 1/3 of a cent``."""
    whole = cents.numerator // cents.denominator
    rest = cents - whole
    text = format_cents(whole)
    return f"{text} and {fraction_text(rest)} of a cent" if rest else text


def void_confirmation(table_id: str, round_id: str, returned_cents: int, refund: Fraction) -> str:
    """What voiding a held round does, as its confirmation says it before the passkey signs."""
    return (
        f"Void round {round_id} on table {table_id}: every wager goes back to its seat "
        f"({format_cents(returned_cents)} in all), and the contributions they made to the pool, "
        f"{exact_amount(refund)}, come off its meters exactly. Nothing is paid."
    )


def not_held(table_id: str, round_id: str, *, is_open: bool) -> str:
    """Why the console will not draft the void of a round it does not hold, in plain words."""
    if not is_open:
        return (
            f"Round {round_id} is not open on table {table_id}: it was voided or settled "
            f"already, or never began. {NOTHING_MOVED}"
        )
    return (
        f"Round {round_id} on table {table_id} is not held: the console voids only a round the "
        "controller holds for a supervisor. A round being dealt is voided by the dealer at the "
        f"table, or with jackpotd void. {NOTHING_MOVED}"
    )


def no_fault_waiting() -> str:
    """Why the console drafts no acknowledgement: there is no fault to acknowledge."""
    return f"No fault waits for an acknowledgement. {NOTHING_MOVED}"


def fault_came_since(through: str, newest: str) -> str:
    """Why the console drafts no acknowledgement through a fault that is no longer the newest."""
    return (
        f"Another fault was journaled since the list was shown ({newest}, after {through}): "
        f"look at the list again and acknowledge through the newest. {NOTHING_MOVED}"
    )
