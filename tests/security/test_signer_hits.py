"""The signer process signs the hits the daemon announces, for the controllers it serves only.

A real ``jackpotd signer`` (tests/support/runtime/signer_process.py) and the daemon's client
(controller/runtime/remote_signer.py): a hit signed through it verifies under the hit domain
with the signer's public key (as a sign station checks it, drivers/mqtt/hits.py), and a hit
naming a controller the signer does not serve gets no signature (controller/service/
signer_server.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from support.runtime.controller_keys import write_controller_key
from support.runtime.signer_process import running

from controller.clock import utc_now
from controller.meter_signature import HIT_DOMAIN, MeterKeys, Signer
from controller.outputs import HitAnnouncement
from controller.runtime.remote_signer import RemoteSigner
from controller.security.signer import SignerRefusedError
from drivers.mqtt.outgoing import hit_payload

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.runtime.signer_process import SignerProcess

HIT = HitAnnouncement(utc_now(), 41, "t3/r-9/2/progressive", "main", "t3", 2, "royal",
                      2_523_417, pending=True, tax_report=True, epoch=3)  # fmt: skip


@pytest.fixture
def hits_signer(tmp_path: Path) -> Iterator[SignerProcess]:
    write_controller_key(tmp_path)
    yield from running(tmp_path / "controller.key", tmp_path, "c1")


def test_a_hit_signed_through_the_signer_verifies_as_the_controllers(
    hits_signer: SignerProcess,
) -> None:
    client = RemoteSigner(hits_signer.socket, timeout_s=5.0)
    payload = json.loads(hit_payload(HIT, Signer(client.key_id, client.sign), "c1"))
    assert (payload["v"], payload["controller"], payload["key_id"]) == (2, "c1", client.key_id)
    assert MeterKeys([client.public_key]).refusal(HIT_DOMAIN, payload) is None


def test_a_hit_naming_a_controller_the_signer_does_not_serve_is_refused(
    hits_signer: SignerProcess,
) -> None:
    client = RemoteSigner(hits_signer.socket, timeout_s=5.0)
    with pytest.raises(SignerRefusedError, match="'c2' is not one this signer serves"):
        hit_payload(HIT, Signer(client.key_id, client.sign), "c2")
