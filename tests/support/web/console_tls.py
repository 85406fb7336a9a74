"""The supervisors' console served over HTTPS: a test CA, its certificate, and the floor.

:func:`certificate` makes a certificate authority and a server certificate it signs for the
given host names (and 127.0.0.1), with the ``cryptography`` package, as PEM files; the key
file is mode 0600, as ``[web] tls_key`` must be. :func:`tls_floor` is the console's floor of
tests/support/web/console_rig.py (a signed journal, its operators, pending pays) with ``[web]``
lines of the test's own: the configuration is approved as written, TLS settings included.

:func:`trusting_chromium` launches headless Chromium resolving every test host name to
127.0.0.1 and trusting the test certificate by its public key's digest
(``--ignore-certificate-errors-spki-list``), so that the page is a secure context with a
certificate the browser takes as valid, as a property's own CA would be.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import ipaddress
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from playwright.async_api import async_playwright

from controller.config.load import load_config
from support.runtime.controller_keys import KEY_LINE
from support.runtime.floor import approved_site, write_config
from support.web.console_rig import _settled
from support.web.display_rig import CHROMIUM_FLAGS, chromium

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from playwright.async_api import Browser

    from controller.config.load import Config

CONSOLE_HOST: Final = "console.test"
"""The console's host name in these tests (Chromium resolves it to 127.0.0.1)."""


@dataclass(frozen=True, slots=True)
class Certificate:
    """A test CA's certificate and a server certificate it signed, with its key, as files."""

    ca: Path
    cert: Path
    key: Path
    spki_sha256: str
    """The server key's SubjectPublicKeyInfo digest, base64: what Chromium is told to trust."""

    def client(self) -> ssl.SSLContext:
        """A client's TLS context trusting only the test CA."""
        return ssl.create_default_context(cafile=str(self.ca))


def certificate(folder: Path, *names: str) -> Certificate:
    """A CA and a certificate it signs for ``names`` and 127.0.0.1, written into ``folder``."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jackpotd test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alternatives: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    alternatives.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "web.pem", folder / "web.key"
    ca_path.write_bytes(ca.public_bytes(pem))
    cert_path.write_bytes(leaf.public_bytes(pem))
    key_path.touch(mode=0o600)
    key_path.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    spki = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = base64.b64encode(hashlib.sha256(spki).digest()).decode()
    return Certificate(ca_path, cert_path, key_path, digest)


def tls_floor(
    folder: Path, line: str, port: int, web: str
) -> tuple[Config, dict[str, Ed25519PrivateKey]]:
    """The console's floor (tests/support/web/console_rig.py) with ``web``'s ``[web]`` lines."""
    config = write_config(folder, "console", {"T1": line}, port)
    lines = (
        f'{KEY_LINE}\noperator_socket = "operator.sock"\nverification_amount = "$500"\n'
        'dual_control_amount = "$5,000"\n'
    )
    text = config.read_text("utf-8").replace(KEY_LINE, lines)
    text = text.replace('[web]\nhost = "127.0.0.1"\n', f"[web]\n{web}\n")
    config.write_text(text, "utf-8")
    site = approved_site(config)
    _settled(folder / "journal.db", site)
    return load_config(config), site.keys


@contextlib.asynccontextmanager
async def trusting_chromium(spki_sha256: str, *hosts: str) -> AsyncIterator[Browser]:
    """Headless Chromium trusting the test certificate, ``hosts`` resolved to 127.0.0.1."""
    rules = ", ".join(f"MAP {host} 127.0.0.1" for host in hosts)
    flags = [
        *CHROMIUM_FLAGS,
        f"--host-resolver-rules={rules}",
        f"--ignore-certificate-errors-spki-list={spki_sha256}",
    ]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium(), args=flags)
        try:
            yield browser
        finally:
            await browser.close()
