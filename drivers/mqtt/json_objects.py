"""The MQTT payloads' JSON objects, read strictly: one object, each key once, a known version.

Every JSON payload of the topic tree (:mod:`drivers.mqtt.payloads`, the table events and the
statuses; the agents' and the sites' messages) is read here first: at most
:data:`MAX_PAYLOAD` bytes, valid JSON, an object with no key twice (:func:`check_unique_keys`)
and a schema version this controller knows, then converted to its struct with the field at
fault named in the reason (``bad-seat``, ``missing-field``): :class:`PayloadError`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec

from controller.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Collection

SCHEMA_VERSION: Final = 1
MAX_PAYLOAD: Final = 4096
"""Largest table payload in bytes; the biggest valid one is a few hundred."""
PREVIEW: Final = 120
"""How much of a refused payload the detail quotes."""


class PayloadError(InputError, ValueError):
    """A payload that is no valid message: a short ``reason`` token and a ``detail``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def preview(data: bytes) -> str:
    """The start of a refused payload, as a detail quotes it (at most :data:`PREVIEW` bytes)."""
    text = repr(data[:PREVIEW])
    return text + "..." if len(data) > PREVIEW else text


_FIELD_AT: Final = re.compile(r"at `\$\.([A-Za-z_]+)")
_T = TypeVar("_T")


def _validation_reason(message: str) -> str:
    """A reason token from a msgspec validation message (``bad-seat``, ``missing-field``)."""
    if message.startswith("Object missing required field"):
        return "missing-field"
    if message.startswith("Object contains unknown field"):
        return "unknown-field"
    match = _FIELD_AT.search(message)
    if match:
        return "bad-" + match.group(1).replace("_", "-")
    return "bad-payload"


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        keys = [key for key, _ in pairs]
        twice = next(key for key in keys if keys.count(key) > 1)
        raise PayloadError("duplicate-key", f"the key {twice!r} appears more than once")
    return value


_PAIRS: Final = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def check_unique_keys(data: bytes) -> None:
    """Refuse JSON (already known to be valid) in which an object has a key twice.

    msgspec, like most parsers, keeps the last value of a repeated key; a device could then
    show one amount to a reader that keeps the first and another to the ledger. The standard
    library's parser hands each object's pairs over in order, so a repeat can be seen.
    """
    _PAIRS.decode(data.decode())


def decode_object(data: bytes, versions: Collection[int] = (SCHEMA_VERSION,)) -> dict[str, Any]:
    """A JSON object of one of ``versions`` (1), else :class:`PayloadError` (``bad-json``...)."""
    if len(data) > MAX_PAYLOAD:
        raise PayloadError("too-large", f"{len(data)} bytes, at most {MAX_PAYLOAD}")
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError as error:
        raise PayloadError("bad-json", f"{error} in {preview(data)}") from error
    check_unique_keys(data)
    if not isinstance(value, dict):
        raise PayloadError("bad-payload", f"expected a JSON object, got {preview(data)}")
    if "v" not in value:
        raise PayloadError("bad-version", 'no schema version field "v"')
    version = value["v"]
    # bool is an int in Python; true is no version number.
    if type(version) is not int or version not in versions:
        supported = ", ".join(map(str, versions))
        detail = f"schema version {version!r} is not supported (this controller: {supported})"
        raise PayloadError("bad-version", detail)
    return value


def convert(value: dict[str, Any], kind: type[_T]) -> _T:
    """``value`` as a ``kind``, or :class:`PayloadError` naming the field."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as error:
        raise PayloadError(_validation_reason(str(error)), str(error)) from error
