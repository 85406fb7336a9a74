"""The ``[web]`` section: where the display listens, its TLS, and the console's relying party.

The supervisors' console signs with passkeys, and WebAuthn runs only in a secure context: a
page served over HTTPS, or from ``localhost``. Its relying party id and origin are written into
every enrollment the managers sign, and every later assertion must match them; they are the
configuration's, never the request's (a ``Host`` header is the client's to choose). So:

* ``tls_cert`` and ``tls_key`` go together; both are loaded here, so that a certificate that
  does not match its key, or a key other users may read, stops the start;
* on a localhost bind the console's relying party id is ``localhost`` and its origin
  ``http://localhost:<port>`` (``https://`` with TLS), unless configured;
* on any other bind with TLS, ``console_rp_id`` is the host name the page is opened at (its
  certificate's name), and ``console_origin`` defaults to ``https://<console_rp_id>:<port>``;
* on any other bind without TLS the console is not served: ``/console/`` says why, in plain
  words, and configuring its relying party there is an error.

:func:`read_web` gives the section with its paths absolute and the console's relying party
filled in (empty: no console); :func:`tls_context` is the server's TLS context of the files.
"""

from __future__ import annotations

import ipaddress
import ssl
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import msgspec

if TYPE_CHECKING:
    from controller.config.schema import WebSettings
    from controller.config.values import Checker

LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
"""Binds only this machine reaches: its own screen, a secure context without TLS."""
HTTPS_PORT: Final = 443


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """The server's TLS context of a certificate chain and its key (TLS 1.2 at least)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def is_local(host: str) -> bool:
    """Whether ``host`` is a loopback bind (127.0.0.0/8, ``::1``, ``localhost``)."""
    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_web(checks: Checker, web: WebSettings, *, console: bool) -> WebSettings:
    """``[web]`` checked; ``console``: an operator socket is configured (the console is on)."""
    if not web.host.strip():
        raise checks.fail("web.host", "an address to listen on is required")
    checks.port("web.port", web.port)
    if web.max_connections <= web.max_streams:
        raise checks.fail(
            "web.max_connections",
            f"must be above max_streams ({web.max_streams}), so that /healthz and "
            f"/metrics find a place while every stream is open, not {web.max_connections}",
        )
    cert, key = _tls(checks, web)
    tls = bool(cert)
    rp_id, origin = _relying_party(checks, web, tls=tls, console=console)
    return msgspec.structs.replace(
        web, tls_cert=cert, tls_key=key, console_rp_id=rp_id, console_origin=origin
    )


def _tls(checks: Checker, web: WebSettings) -> tuple[str, str]:
    """The certificate's and key's absolute paths, both loaded; empty: no TLS."""
    if not web.tls_cert and not web.tls_key:
        return "", ""
    if not web.tls_key:
        raise checks.fail("web.tls_key", "tls_cert is set: the certificate's private key too")
    if not web.tls_cert:
        raise checks.fail("web.tls_cert", "tls_key is set: the certificate it is the key of too")
    cert = checks.existing_file("web.tls_cert", web.tls_cert) or ""
    key = checks.existing_file("web.tls_key", web.tls_key, secret=True) or ""
    try:
        tls_context(cert, key)
    except ssl.SSLError as error:
        raise checks.fail(
            "web.tls_cert", f"{cert} and {key} are not a PEM certificate and its key: {error}"
        ) from error
    except OSError as error:
        raise checks.fail("web.tls_cert", f"cannot read {cert}: {error}") from error
    return str(cert), str(key)


def _relying_party(
    checks: Checker, web: WebSettings, *, tls: bool, console: bool
) -> tuple[str, str]:
    """The console's relying party id and origin; empty when the console is not served."""
    local = is_local(web.host)
    rp_id = web.console_rp_id.strip().lower()
    if rp_id:
        _check_rp_id(checks, rp_id)
    written = web.console_origin.strip()
    if not tls and not local:
        if rp_id or written:
            raise checks.fail(
                "web.tls_cert",
                f"the console's passkeys need a secure context: on {web.host} it is served "
                "over HTTPS only (set tls_cert and tls_key), or on a localhost bind",
            )
        return "", ""
    if not rp_id:
        if not local and console:
            raise checks.fail(
                "web.console_rp_id",
                f"the console on {web.host} needs the host name its page is opened at (the "
                "certificate's name): it is its passkeys' relying party id",
            )
        rp_id = "localhost"
    scheme = "https" if tls else "http"
    port = "" if tls and web.port == HTTPS_PORT else f":{web.port}"
    origin = _checked_origin(checks, written, rp_id, tls=tls) if written else None
    return rp_id, origin or f"{scheme}://{rp_id}{port}"


def _check_rp_id(checks: Checker, rp_id: str) -> None:
    """A host name: no scheme, port or path, and not an address (WebAuthn refuses those)."""
    try:
        ipaddress.ip_address(rp_id.strip("[]"))
    except ValueError:
        pass
    else:
        raise checks.fail(
            "web.console_rp_id",
            f"{rp_id!r} is an address: a passkey's relying party id is a host name",
        )
    labels = rp_id.split(".")
    if not all(label and all(c.isalnum() or c == "-" for c in label) for label in labels):
        raise checks.fail(
            "web.console_rp_id",
            f"{rp_id!r} is not a host name (letters, digits, hyphens and dots; no scheme, "
            "port or path)",
        )


def _checked_origin(checks: Checker, written: str, rp_id: str, *, tls: bool) -> str:
    """``console_origin``: a scheme, a host at or under the relying party id, a port."""
    parts = urlsplit(written)
    try:
        port = parts.port
    except ValueError as error:
        raise checks.fail("web.console_origin", f"{written!r}: {error}") from error
    host = parts.hostname or ""
    if parts.scheme not in {"https", "http"} or not host or parts.path not in {"", "/"}:
        raise checks.fail(
            "web.console_origin",
            f"{written!r} is not an origin: a scheme, a host and a port, as "
            "https://pit.example:8080",
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise checks.fail("web.console_origin", f"{written!r} is not an origin")
    if parts.scheme != ("https" if tls else "http"):
        raise checks.fail(
            "web.console_origin",
            f"{written!r}: the port serves {'HTTPS' if tls else 'plain HTTP'}, so the console's "
            f"origin is {'https' if tls else 'http'}://",
        )
    if host != rp_id and not host.endswith(f".{rp_id}"):
        raise checks.fail(
            "web.console_origin",
            f"{written!r}: its host is neither the relying party id {rp_id!r} nor under it",
        )
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
