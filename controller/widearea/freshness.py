"""Whether central's acknowledgement is a fresh one, of this connection, or one published again.

docs/wide-area.md, "A replayed acknowledgement". Central's signature proves who made an
acknowledgement, not when: anyone who captured one (a user of the broker, a tap on the WAN)
could publish it again later, and a property that took it would keep its wide-area wagers open
past its grace while central is in fact silent (Michigan R 432.1841), or reopen them on an old
reconciliation. So each connection of the property opens with a random nonce of its own
(:class:`~controller.widearea.messages.SiteHello`), central signs it into every acknowledgement
with a counter of its own that only grows, and the property takes an acknowledgement only if it
names the current connection's nonce and a counter beyond the last it took
(:meth:`AckFreshness.judge`). Its content is judged after that
(:func:`controller.widearea.property_link.judge_central_ack`).

The counter is the property's per connection, not persisted: a restart or a reconnection
chooses a new nonce, and no acknowledgement of any earlier one names it. Times are no part of
it: the two clocks need not agree.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from controller.widearea.messages import ACK_FRESH
from controller.widearea.property_link import CentralAckRefused

if TYPE_CHECKING:
    from controller.widearea.messages import CentralAck

UNBOUND: Final = "unbound"
"""An acknowledgement naming no connection: the first format, or a central that has not heard
this connection's hello (it restarted, or the hello is still on its way)."""
OTHER_CONNECTION: Final = "other-connection"
"""One naming another connection's nonce: an earlier connection's, published again."""
REPLAYED: Final = "replayed"
"""One of this connection whose counter is not beyond the last taken: the same one again."""
FRESHNESS_REFUSALS: Final = (UNBOUND, OTHER_CONNECTION, REPLAYED)


@dataclass(frozen=True, slots=True)
class AckFreshness:
    """The property's current connection to central, and the last counter it took on it."""

    nonce: str
    """Chosen at random by the property for this connection ("" before any: nothing is fresh)."""
    counter: int = 0
    """The counter of the last acknowledgement taken on this connection (0: none yet)."""

    @property
    def bound(self) -> bool:
        """Whether central acknowledged this connection at least once."""
        return self.counter > 0

    def judge(self, ack: CentralAck) -> CentralAckRefused | None:
        """Why ``ack`` is not a fresh acknowledgement of this connection; None if it is."""
        if ack.version < ACK_FRESH or not ack.nonce or not self.nonce:
            return CentralAckRefused(UNBOUND, f"through {ack.through}, naming no connection")
        if ack.nonce != self.nonce:
            detail = f"through {ack.through}, of connection {ack.nonce[:8]}, not {self.nonce[:8]}"
            return CentralAckRefused(OTHER_CONNECTION, detail)
        if ack.counter <= self.counter:
            detail = f"through {ack.through}, counter {ack.counter} after {self.counter}"
            return CentralAckRefused(REPLAYED, detail)
        return None

    def after(self, ack: CentralAck) -> AckFreshness:
        """The connection once ``ack`` (judged fresh) was taken: its counter is the floor."""
        return dataclasses.replace(self, counter=ack.counter)
