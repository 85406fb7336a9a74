"""Who keeps a controller's mystery levels' sealed triggers: the signer process, or the process.

The trigger of a mystery level is drawn and kept sealed where the controller key is
(docs/security.md, "Mystery levels: the sealed trigger"), so the daemon's start-up asks here
which keeper its :class:`~controller.runtime.mystery_watch.MysteryWatch` talks to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.clock import utc_now
from controller.journal.location import sqlite_file
from controller.mystery.keeper import LocalKeeper
from controller.mystery.store import SealedFile
from controller.runtime.mystery_watch import MysteryWatch, mystery_pools
from controller.runtime.remote_signer import RemoteSigner
from controller.security.controller_key import resolve
from controller.security.sealing_key import load_sealing_key

if TYPE_CHECKING:
    from controller.config.load import Config
    from controller.ledger.apply import LedgerState
    from controller.mystery.keeper import Keeper
    from controller.security.signer import Signer


def mystery_watch(config: Config, state: LedgerState, key: Signer) -> MysteryWatch | None:
    """Who draws and checks the mystery levels' triggers, if the journal holds any.

    The signer process keeps them when the controller key lives there; a key in the process
    keeps them in ``<journal>.mystery.json`` (0600) beside a journal file, else in memory
    (controller/runtime/mystery_watch.py, docs/security.md "Mystery levels: the sealed trigger"),
    sealing each draw for the cluster with ``sealing_key_file`` (docs/ha.md, "Mystery levels
    across a failover").
    """
    if not mystery_pools(state):
        return None
    keeper: Keeper
    if isinstance(key, RemoteSigner):
        keeper = key
    else:
        path = sqlite_file(config.controller.journal)
        store = SealedFile(path.with_name(f"{path.name}.mystery.json")) if path else None
        sealing_file = config.controller.sealing_key_file
        sealing = load_sealing_key(resolve(sealing_file)) if sealing_file else None
        keeper = LocalKeeper(key, store, sealing)
    return MysteryWatch(keeper, config.controller.controller_id, key.key_id, utc_now)
