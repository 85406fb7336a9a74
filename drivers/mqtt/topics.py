"""The MQTT topic tree (docs/mqtt.md): builders for the controller's topics, a parser for tables'.

Every topic sits under ``<site>/jackpot/v1/``::

    table/<tid>/status          retained, last will "offline"     written by a table
    table/<tid>/event/<type>    not retained                      written by a table
    table/<tid>/cmd/<name>      not retained                      written by the controller
    controller/<id>/status      retained, last will "offline"     written by the controller
    controller/<id>/checkpoint  retained                          written by the controller
    meter/<pool>                retained                          written by the controller
    meter/<pool>/hit            not retained                      written by the controller
    meter/<pool>/status         retained                          written by the controller
    wide/<site>/up              not retained                      written by a property
    wide/<site>/status          retained, last will "offline"     written by a property
    wide/<site>/ack             not retained                      written by central
    wide/<site>/award           not retained                      written by central

The ``wide/`` topics are central's, on its brokers: a linked property publishes its chain and
its totals on ``up`` and hears central on ``ack`` and ``award`` (docs/wide-area.md).

A hit that belongs to no pool (a large bonus payout awaiting verification) goes to
``meter/_/hit``: ``_`` is reserved and is never a pool id.

Identifiers that become a topic level (table, pool, controller, command and event names) are
1-64 of ``A-Z a-z 0-9 . _ : -``. That keeps them free of the MQTT separators and wildcards
(``/``, ``+``, ``#``), and a table id also goes into event ids (``table/device/seq``), where a
``/`` would make two different inputs share an id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from controller.errors import InputError

NO_POOL: Final = "_"
"""The pool level of a hit that belongs to no pool."""

EVENT_TYPES: Final = frozenset({"bet", "lock", "card", "done", "void", "heartbeat"})
"""The ``<type>`` levels a table may publish under ``table/<tid>/event/``."""

_IDENTIFIER: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_SITE_LEVEL: Final = re.compile(r"[^/+#\x00]+")


class TopicError(InputError, ValueError):
    """A topic or topic level the tree does not allow; ``reason`` is a short token."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def check_identifier(value: str, what: str) -> str:
    """``value`` if it may be a topic level naming a ``what`` (table, pool...), else TopicError."""
    if not _IDENTIFIER.fullmatch(value):
        raise TopicError(f"bad-{what}", f"{what} id {value!r} is not 1-64 of A-Z a-z 0-9 . _ : -")
    return value


@dataclass(frozen=True, slots=True)
class TableEventTopic:
    """``table/<tid>/event/<type>``: the table, and the event type (checked later)."""

    table_id: str
    event_type: str


@dataclass(frozen=True, slots=True)
class TableStatusTopic:
    """``table/<tid>/status``."""

    table_id: str


@dataclass(frozen=True, slots=True)
class SiteUpTopic:
    """``wide/<site>/up``: a linked property's messages and totals (docs/wide-area.md)."""

    site: str


@dataclass(frozen=True, slots=True)
class Topics:
    """The topic tree of one site: ``Topics("casino").meter("main")``."""

    site: str
    prefix: str = field(init=False)
    """``<site>/jackpot/v1/``, with the trailing slash."""

    def __post_init__(self) -> None:
        # A site may span levels ("casino/floor-2"), but no level may be empty or a wildcard:
        # the subscriptions below would otherwise match other sites' topics.
        levels = self.site.split("/")
        if not all(_SITE_LEVEL.fullmatch(level) for level in levels):
            detail = f"site {self.site!r} must be non-empty levels without + or #"
            raise TopicError("bad-site", detail)
        object.__setattr__(self, "prefix", f"{self.site}/jackpot/v1/")

    # What tables publish (the controller subscribes with these filters).

    @property
    def table_event_filter(self) -> str:
        """Every table's events."""
        return f"{self.prefix}table/+/event/+"

    @property
    def table_status_filter(self) -> str:
        """Every table's status."""
        return f"{self.prefix}table/+/status"

    def table_status(self, table_id: str) -> str:
        """Where a table publishes ``online`` (retained) and sets its last will ``offline``."""
        return f"{self.prefix}table/{check_identifier(table_id, 'table')}/status"

    def table_event(self, table_id: str, event_type: str) -> str:
        """Where a table publishes one type of event."""
        if event_type not in EVENT_TYPES:
            raise TopicError("unknown-type", f"event type {event_type!r} is not one of {_types()}")
        return f"{self.prefix}table/{check_identifier(table_id, 'table')}/event/{event_type}"

    # What the controller publishes.

    def table_command(self, table_id: str, name: str) -> str:
        """A command to a table (``state``: open or closed)."""
        table = check_identifier(table_id, "table")
        return f"{self.prefix}table/{table}/cmd/{check_identifier(name, 'command')}"

    def controller_status(self, controller_id: str) -> str:
        """The controller's ``online``/``offline`` (retained; its last will is ``offline``)."""
        return f"{self.prefix}controller/{check_identifier(controller_id, 'controller')}/status"

    def controller_checkpoint(self, controller_id: str) -> str:
        """The controller's last signed checkpoint (retained; docs/journal.md)."""
        return f"{self.prefix}controller/{check_identifier(controller_id, 'controller')}/checkpoint"

    def controller_head(self, controller_id: str) -> str:
        """The controller's last signed head, its high-water mark (retained; docs/security.md)."""
        return f"{self.prefix}controller/{check_identifier(controller_id, 'controller')}/head"

    def meter(self, pool_id: str) -> str:
        """A pool's meters (retained)."""
        return f"{self.prefix}meter/{_pool(pool_id)}"

    def pool_status(self, pool_id: str) -> str:
        """Whether a pool's wagers are open as a whole, and why not (retained)."""
        return f"{self.prefix}meter/{_pool(pool_id)}/status"

    def hit(self, pool_id: str | None) -> str:
        """A hit on a pool, or on no pool (``meter/_/hit``)."""
        level = NO_POOL if pool_id is None else _pool(pool_id)
        return f"{self.prefix}meter/{level}/hit"

    # The wide-area link (docs/wide-area.md), on central's brokers.

    @property
    def site_up_filter(self) -> str:
        """Every linked property's messages and totals."""
        return f"{self.prefix}wide/+/up"

    def site_up(self, site: str) -> str:
        """Where a linked property publishes its messages and totals."""
        return f"{self.prefix}wide/{check_identifier(site, 'site')}/up"

    def site_status(self, site: str) -> str:
        """A linked property's ``online``/``offline`` (retained; its last will is ``offline``)."""
        return f"{self.prefix}wide/{check_identifier(site, 'site')}/status"

    def site_ack(self, site: str) -> str:
        """Where central acknowledges a linked property's messages."""
        return f"{self.prefix}wide/{check_identifier(site, 'site')}/ack"

    def site_mark(self, site: str) -> str:
        """Where central answers a linked property's hello with the mark it keeps of it."""
        return f"{self.prefix}wide/{check_identifier(site, 'site')}/mark"

    def site_award(self, site: str) -> str:
        """Where central sends a linked property the awards of its hit claims."""
        return f"{self.prefix}wide/{check_identifier(site, 'site')}/award"

    def parse(self, topic: str) -> TableEventTopic | TableStatusTopic | SiteUpTopic | None:
        """What a table topic names; None for a topic outside ``table/+/event/+`` and ``status``.

        Raises :class:`TopicError` when the table id is not a valid identifier. The event type
        is not checked here, so that an unknown type is reported with its table.
        """
        if not topic.startswith(self.prefix):
            return None
        levels = topic[len(self.prefix) :].split("/")
        match levels:
            case ["table", table_id, "event", event_type]:
                return TableEventTopic(check_identifier(table_id, "table"), event_type)
            case ["table", table_id, "status"]:
                return TableStatusTopic(check_identifier(table_id, "table"))
            case ["wide", site, "up"]:
                return SiteUpTopic(check_identifier(site, "site"))
            case _:
                return None


def _pool(pool_id: str) -> str:
    if pool_id == NO_POOL:
        raise TopicError("bad-pool", f"pool id {NO_POOL!r} is reserved for hits on no pool")
    return check_identifier(pool_id, "pool")


def _types() -> str:
    return ", ".join(sorted(EVENT_TYPES))
