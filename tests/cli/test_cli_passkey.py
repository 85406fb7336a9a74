"""``jackpotd passkey enroll``: a manager at the command line signs the console's draft.

docs/operations.md, "The supervisors' console". The daemon serves the console over its own
HTTPS (a test CA's certificate for ``console.test``, tests/support/web/console_tls.py) and listens
on its operator socket. A manager starts sup1's enrollment at the console and sup1's
authenticator registers it (a software authenticator, tests/support/web/authenticator.py, posting
what a browser posts); the manager then runs ``jackpotd passkey enroll --draft URL --key
mgr.key`` as a user runs it, in a process of its own: it shows what it signs, signs it with
the key file, and hands it in through the operator socket. The ledger takes it: sup1's passkey
is enrolled at the console's relying party. A draft not yet registered, one the console no
longer holds, a file holding another event and a supervisor's key are each refused in one
line, and nothing is enrolled.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import aiohttp
from support.deploy.source_tree import ROOT
from support.ledger.approvals import PASSPHRASE, key_file
from support.runtime.daemon import daemon
from support.runtime.floor import free_port
from support.web.authenticator import Authenticator
from support.web.console_tls import CONSOLE_HOST, certificate, tls_floor

from controller.events import HitVerified, encode_event
from controller.ledger.passkeys import passkeys_of
from drivers.simulator_links.serial import PtyPair

if TYPE_CHECKING:
    import ssl
    from pathlib import Path

PAGE = ROOT / "docs" / "operations.md"


async def _enrollment(
    session: aiohttp.ClientSession, base: str, origin: str, tls: ssl.SSLContext, *, registered: bool
) -> str:
    """sup1's enrollment drafted by mgr at the console, registered by sup1's authenticator."""
    asked = {"operator": "sup1", "label": "sup1's tablet", "by": "mgr"}
    async with session.post(
        f"{base}/console/api/enroll", json=asked, headers={"Origin": origin}, ssl=tls
    ) as response:
        drafted: dict[str, Any] = await response.json()
    if not registered:
        return str(drafted["draft"])
    challenge = hashlib.sha256(base64.b64decode(drafted["bytes"])).digest()
    made = Authenticator().register(challenge, rp_id=CONSOLE_HOST, origin=origin)
    registration = {
        "draft": drafted["draft"],
        "credential_id": made.credential_id,
        "attestation_object": made.attestation_object,
        "client_data_json": made.client_data_json,
    }
    async with session.post(
        f"{base}/console/api/register", json=registration, headers={"Origin": origin}, ssl=tls
    ) as response:
        answer = await response.json()
    assert answer.get("registering") is False, answer
    return str(drafted["draft"])


def documented(url: str, ca: Path, key: Path) -> list[str]:
    """The console section's ``passkey enroll`` command, its draft, CA and key put in."""
    section = PAGE.read_text(encoding="utf-8").split("### The supervisors' console", 1)[1]
    text = section.split("\n## ", 1)[0].replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if "jackpotd passkey enroll" in line]
    words = shlex.split(line, comments=True)
    assert words[:3] == ["jackpotd", "passkey", "enroll"], line
    put = {"/etc/jackpotd/casino-ca.pem": str(ca), "/media/dana/dana.key": str(key)}
    return [url if word.startswith("https://") else put.get(word, word) for word in words[1:]]


def _jackpotd(folder: Path, *words: str) -> subprocess.CompletedProcess[str]:
    """``jackpotd WORDS`` in its own process, as the manager runs it at their account."""
    passphrase = folder / "passphrase"
    passphrase.write_text(PASSPHRASE, "utf-8")
    return subprocess.run(
        [sys.executable, "-m", "controller", *words, "--passphrase-file", str(passphrase)],
        capture_output=True, text=True, timeout=120, check=False, cwd=folder,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def test_a_manager_signs_the_console_s_draft_with_their_key_file_as_documented(
    tmp_path: Path,
) -> None:
    port = free_port()
    made = certificate(tmp_path, CONSOLE_HOST)
    web = (
        f'host = "0.0.0.0"\ntls_cert = "{made.cert.name}"\ntls_key = "{made.key.name}"\n'
        f'console_rp_id = "{CONSOLE_HOST}"'
    )
    origin = f"https://{CONSOLE_HOST}:{port}"
    base = f"https://127.0.0.1:{port}"
    with PtyPair() as line:
        config, keys = tls_floor(tmp_path, line.path, port, web)
        manager = key_file(tmp_path, "mgr", keys["mgr"])
        supervisor = key_file(tmp_path, "sup1", keys["sup1"])
        socket = str(tmp_path / "operator.sock")
        async with daemon(config) as running, aiohttp.ClientSession() as session:
            tls = made.client()
            ca = ["--ca", str(made.ca)]
            draft = await _enrollment(session, base, origin, tls, registered=False)
            url = f"{base}/console/api/drafts/{draft}"
            unregistered = await _in_thread(tmp_path, url, manager, socket, ca)
            assert unregistered.returncode == 1
            assert "not registered yet" in unregistered.stderr

            gone = f"{base}/console/api/drafts/draft-0000"
            answered = await _in_thread(tmp_path, gone, manager, socket, ca)
            assert answered.returncode == 1
            assert "the console says: this action's signing time is over" in answered.stderr

            other = tmp_path / "verify.json"
            other.write_bytes(encode_event(HitVerified("v-1", "2026-11-29T15:00:00Z", "p", "mgr")))
            wrong = await _in_thread(tmp_path, str(other), manager, socket, ca)
            assert wrong.returncode == 1
            assert "a hit-verified event, not a passkey's enrollment" in wrong.stderr

            draft = await _enrollment(session, base, origin, tls, registered=True)
            url = f"{base}/console/api/drafts/{draft}"
            by_supervisor = await _in_thread(tmp_path, url, supervisor, socket, ca)
            assert by_supervisor.returncode != 0
            assert not passkeys_of(running.runtime.journal.state)

            # A refused enrollment is journaled as refused, its id with it: the console drafts
            # the enrollment again (a new id) and the manager signs that one.
            draft = await _enrollment(session, base, origin, tls, registered=True)
            url = f"{base}/console/api/drafts/{draft}"
            words = [*documented(url, made.ca, manager), "--socket", socket]
            signed = await asyncio.to_thread(_jackpotd, tmp_path, *words)  # as the page says
            assert signed.returncode == 0, signed.stdout + signed.stderr
            assert 'operator sup1, label "sup1\'s tablet"' in signed.stderr
            assert f"relying party {CONSOLE_HOST}, origins {origin}" in signed.stderr
            (passkey,) = passkeys_of(running.runtime.journal.state).values()
            assert (passkey.operator, passkey.rp_id, list(passkey.origins)) == (
                "sup1", CONSOLE_HOST, [origin],
            )  # fmt: skip


async def _in_thread(
    folder: Path, draft: str, key: Path, socket: str, ca: list[str]
) -> subprocess.CompletedProcess[str]:
    """The command, run beside the in-process daemon (whose loop must keep answering)."""
    words = ["passkey", "enroll", "--draft", draft, "--key", str(key), "--socket", socket, *ca]
    return await asyncio.to_thread(_jackpotd, folder, *words)
