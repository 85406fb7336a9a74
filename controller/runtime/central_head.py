"""The third copy of the high-water mark: central's, asked for at a property's start.

docs/security.md, "History never goes back". A property of a wide-area link sends central each
signed head it makes, and central keeps the highest valid one (controller/runtime/site_links.py).
Before the journal is trusted, :func:`ask_central` says hello to central with a nonce of its own
(a short connection of the uplink's driver, :attr:`controller.plugins.DriverSpec.central_mark`)
and waits, bounded by the link's connect timeout, for central's answer
(:class:`~controller.widearea.messages.CentralMark`). :class:`MarkQuestion` takes an answer only
if central's key signed it, for this site and under that nonce: a forged one, or one of an
earlier start published again (another nonce, a lower mark), is refused and said so, and the wait
goes on. No answer is never a reason to refuse the start, as for the broker's copy; the mark
answered is then checked as the others are (:func:`controller.runtime.heads.central_marks`), and
the journal held to the highest of the three.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from controller import plugins
from controller.config.wide_area_settings import WideAreaProperty
from controller.runtime.checkpointing import schedule_for
from controller.security.controller_key import ControllerKey, signature_verifies
from controller.widearea.messages import SiteHello, canonical, decode_mark, signed_bytes

if TYPE_CHECKING:
    from controller.config.load import Config
    from controller.outputs import SignedHead
    from controller.security.signer import Signer
    from controller.widearea.messages import CentralMark

log = logging.getLogger(__name__)


@dataclass(slots=True)
class MarkQuestion:
    """One start's question to central: its hello, and the judge of the answers that come."""

    site: str
    key: ControllerKey
    central_key: str
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))
    answer: CentralMark | None = None
    """The answer taken (None until one is)."""
    refused: list[str] = field(default_factory=list)
    """Why each answer not taken was refused."""

    def hello(self) -> bytes:
        """The hello of this question, signed with the property's key, as the uplink's are."""
        said = SiteHello(self.site, self.nonce)
        return canonical(msgspec.structs.replace(said, signature=self.key.sign(signed_bytes(said))))

    def accept(self, payload: bytes) -> bool:
        """Whether ``payload`` is central's answer to this hello; refused ones are said so."""
        try:
            answer = decode_mark(payload)
        except msgspec.MsgspecError as error:
            return self._refuse(f"undecodable: {error}")
        if not signature_verifies(self.central_key, answer.signature, signed_bytes(answer)):
            return self._refuse("not signed by central's key")
        if answer.site != self.site:
            return self._refuse(f"of site {answer.site!r}, not {self.site!r}")
        if answer.nonce != self.nonce:
            return self._refuse(
                f"of another hello ({answer.nonce[:8]}, not {self.nonce[:8]}): an earlier "
                "answer published again"
            )
        self.answer = answer
        return True

    def _refuse(self, why: str) -> bool:
        log.warning("an answer on central's mark topic is refused: %s", why)
        self.refused.append(why)
        return False


async def ask_central(
    question: MarkQuestion, settings: object, central_site: str
) -> SignedHead | None:
    """The mark central keeps of the property (None: none kept, or no answer in time)."""
    spec = plugins.uplink_driver()
    if spec.central_mark is None:
        return None
    hello = question.hello()
    await spec.central_mark(settings, central_site, question.site, hello, question.accept)
    if question.answer is None:
        log.warning(
            "central did not answer with its mark of %s: the start goes on with the others",
            question.site,
        )
        return None
    return question.answer.head


async def central_head(config: Config, key: Signer | None = None) -> SignedHead | None:
    """At a property of a wide-area link, central's mark of it; None elsewhere or if none.

    ``key``: the controller's (else the one the configuration names). The wide-area link signs
    with the key in the process (controller/service/wide_area.py): any other asks nothing.
    """
    wide = config.wide_area
    if not isinstance(wide, WideAreaProperty):
        return None
    key = key if key is not None else schedule_for(config).key
    if not isinstance(key, ControllerKey):
        return None
    question = MarkQuestion(wide.site, key, wide.central_key)
    return await ask_central(question, wide.central, wide.central_site)
