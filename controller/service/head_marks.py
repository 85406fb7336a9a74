"""The signed heads a controller resumes at start: its high-water mark, read back and checked.

A controller with a key of its own signs its journal's head (controller/runtime/heads.py); at
start the mark it resumes from is the highest of the high-water file's, the copies its drivers
published (the broker's retained one) and central's on a wide-area link, so a journal that went
back is refused wherever the mark survived (docs/security.md, "History never goes back").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.runtime.heads import HeadSchedule, central_marks, published_marks

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.config.load import Config
    from controller.outputs import SignedHead
    from controller.security.signer import Signer


def key_configured(config: Config) -> bool:
    """Whether the configuration names the controller's key, or the signer that holds it."""
    settings = config.controller
    return settings.key_file is not None or settings.signer_socket is not None


def resumed_heads(
    config: Config,
    key: Signer,
    *,
    configured_key: bool,
    published: Sequence[bytes] = (),
    central: SignedHead | None = None,
) -> HeadSchedule | None:
    """The signed heads of a controller with a key of its own, their mark read back and checked.

    The mark is the highest of the high-water file's and those the drivers read back from where
    they published them (``published``, the broker's retained copy) and central's (``central``,
    a property's on a wide-area link), each signature checked. A key made for one run (the
    demo) keeps no high-water mark: the next run's key could not check it. A mark signed under
    another key id (the key was rotated) is passed over, said so; central's under this key that
    does not verify is refused, as a forged file is (``HighWaterFileError``).
    """
    if not configured_key and not key_configured(config):
        return None
    heads = HeadSchedule.of(config, key)
    heads.resume()
    heads.raise_to(central_marks(central, key))
    heads.raise_to(published_marks(published, key))
    return heads


async def published_heads(config: Config) -> list[bytes]:
    """The signed heads each configured driver published, read back (bounded waits)."""
    found: list[bytes] = []
    for entry in config.drivers:
        if entry.spec.published_head is not None:
            payload = await entry.spec.published_head(
                entry.settings, config.controller.controller_id
            )
            found += [payload] if payload is not None else []
    return found
