"""The headers every answer of the web port carries, and the page they allow to run.

The display page (``page.html``) is one self-contained document with one inline ``<style>``
and one inline ``<script>``. The Content-Security-Policy allows exactly those two, by their
SHA-256 digests, computed here from the page as served, and nothing else: no other script or
style, inline attribute or handler, no resource from anywhere (``default-src 'none'``), fetches
and the event stream from the page's own origin only, and no page may frame it. So a string
that got into the page's data (a table's name, a sign's text) cannot run as script, and the
page cannot be framed to trick a supervisor into a click (docs/security.md).
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from aiohttp import web

PAGE: Final = (resources.files("controller.web") / "page.html").read_text(encoding="utf-8")


def _digests(tag: str, page: str) -> str:
    """The CSP sources naming each inline ``<tag>`` of the page by its SHA-256."""
    bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL)
    if not bodies:  # pragma: no cover - the page has both; a page without one needs no source
        return "'none'"
    digests = (base64.b64encode(hashlib.sha256(body.encode()).digest()) for body in bodies)
    return " ".join(f"'sha256-{digest.decode()}'" for digest in digests)


def content_security_policy(page: str) -> str:
    """The policy that lets ``page`` run its own inline script and style, and nothing else."""
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {_digests('script', page)}",
            f"style-src {_digests('style', page)}",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


CONTENT_SECURITY_POLICY: Final = content_security_policy(PAGE)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def secure(_: web.Request, response: web.StreamResponse) -> None:
    """The security headers on every answer (aiohttp's ``on_response_prepare``)."""
    response.headers.update(SECURITY_HEADERS)
