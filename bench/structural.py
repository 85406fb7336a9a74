r"""Structural attacks on the input decoders: what a device with valid credentials can send.

Random mutation rarely builds these, so they are written out (docs/security.md, the threat model):

* **nesting**: 2,000 ``[`` then 2,000 ``]``, objects nested as deep as the size limit allows,
  and both inside an otherwise valid payload;
* **duplicate keys**: every field of every event type given twice, the second value hostile
  (``"amount_cents":500,"amount_cents":100000000``), and ``"v"`` twice;
* **numbers**: ``1e400``, 400 and 4,000 digits, ``-0``, ``-0.0``, ``1e-400``, ``NaN``,
  ``Infinity``, 2**53 + 1, 2**64, floats where integers belong;
* **strings**: as long as the size limit allows, thousands of escapes, NUL and control
  characters, lone surrogates (``"\ud800"``), a surrogate pair, look-alike letters;
* **encoding**: invalid UTF-8 (``\xff``, an overlong ``/``, a truncated sequence, an encoded
  surrogate), a byte-order mark, UTF-16;
* **documents**: empty, ``null``, a bare string or number, two documents, trailing garbage.

Each hostile *value* is also put in every field of every event type's valid payload, so that
each field's own validation meets it. The serial protocol gets the same hostile values in each
comma-separated field, as a payload string (the framer only passes printable ASCII, so the
protocol decoder is also called directly with what the framer would never let through) and
as raw bytes through the framer.
"""

from __future__ import annotations

import json
from typing import Final

MAX_BYTES: Final = 4096
"""The MQTT payload size limit; nesting attacks are built to fit under it."""

VALID: Final[dict[str, dict[str, object]]] = {
    "bet": {
        "v": 1,
        "device": "s1",
        "seq": 3,
        "seat": 2,
        "spot": "bonus",
        "present": True,
        "amount_cents": 500,
    },
    "lock": {"v": 1, "device": "c1", "seq": 4, "round": "R1"},
    "card": {"v": 1, "device": "shoe", "seq": 5, "round": "R1", "position": 0, "card": "Td"},
    "done": {"v": 1, "device": "shoe", "seq": 6, "round": "R1"},
    "void": {"v": 1, "device": "c1", "seq": 7, "round": "R1", "reason": "misdeal"},
    "heartbeat": {"v": 1, "device": "c1", "seq": 8},
}
"""A valid payload of each MQTT event type, as a JSON object."""


def _nested_arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _nested_objects(depth: int) -> bytes:
    return b'{"":' * depth + b"1" + b"}" * depth


def _long_string(size: int) -> bytes:
    return b'"' + b"A" * size + b'"'


HOSTILE_VALUES: Final[dict[str, bytes]] = {
    "arrays-2000": _nested_arrays(2000),
    "arrays-1000": _nested_arrays(1000),
    "arrays-100000": _nested_arrays(100_000),
    "objects-800": _nested_objects(800),
    "mixed-nesting": b'[{"":' * 500 + b"1" + b"}]" * 500,
    "unclosed-arrays": b"[" * 4000,
    "float-1e400": b"1e400",
    "float--1e400": b"-1e400",
    "float-1e-400": b"1e-400",
    "digits-400": b"9" * 400,
    "digits-4000": b"9" * 4000,
    "negative-digits-400": b"-" + b"9" * 400,
    "minus-zero": b"-0",
    "minus-zero-float": b"-0.0",
    "float-for-int": b"5.0",
    "exponent-int": b"5e0",
    "2**53+1": str(2**53 + 1).encode(),
    "2**64": str(2**64).encode(),
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "nan-lower": b"nan",
    "true": b"true",
    "null": b"null",
    "empty-object": b"{}",
    "empty-array": b"[]",
    "string-3900": _long_string(3900),
    "escapes-600": b'"' + b"\\u0000" * 600 + b'"',
    "backslashes": b'"' + b"\\\\" * 1500 + b'"',
    "control-chars": b'"\\u0000\\u001b[2J\\r\\nforged log line"',
    "lone-high-surrogate": b'"\\ud800"',
    "lone-low-surrogate": b'"\\udfff"',
    "reversed-surrogates": b'"\\udc00\\ud800"',
    "surrogate-pair": b'"\\ud83d\\ude00"',
    "long-s": '"A\u017f"'.encode(),
    "fullwidth": '"\uff21s"'.encode(),
    "invalid-utf8-ff": b'"\xff\xfe"',
    "overlong-slash": b'"\xc0\xaf"',
    "truncated-utf8": b'"\xe2\x82"',
    "encoded-surrogate": b'"\xed\xa0\x80"',
    "nul-byte": b'"a\x00b"',
}
"""Values to put where a field's value belongs (and, each alone, as a whole document)."""

DOCUMENTS: Final[dict[str, bytes]] = {
    "empty": b"",
    "whitespace-4000": b" " * 4000,
    "bom": b"\xef\xbb\xbf" + json.dumps(VALID["lock"]).encode(),
    "utf16": json.dumps(VALID["lock"]).encode("utf-16"),
    "two-documents": json.dumps(VALID["lock"]).encode() * 2,
    "trailing-garbage": json.dumps(VALID["lock"]).encode() + b"\x00garbage",
    "duplicate-v": b'{"v":1,"v":2,"device":"c1","seq":4,"round":"R1"}',
    "duplicate-amount": (
        b'{"v":1,"device":"s1","seq":3,"seat":2,"spot":"bonus","present":true,'
        b'"amount_cents":500,"amount_cents":100000000}'
    ),
    "duplicate-empty-keys": b'{"":1,"":2,"v":1,"device":"c1","seq":4}',
    "key-lone-surrogate": b'{"v":1,"device":"c1","seq":4,"\\ud800":1}',
    "key-invalid-utf8": b'{"v":1,"device":"c1","seq":4,"\xff":1}',
    "many-keys": b'{"v":1,"device":"c1","seq":4,'
    + b",".join(b'"k%d":0' % i for i in range(500))
    + b"}",
    "over-limit": b'{"v":1,"device":"c1","seq":4,"x":"' + b"A" * MAX_BYTES + b'"}',
}
"""Whole payloads that are hostile as documents."""


def _payload(fields: dict[str, object], key: str, value: bytes) -> bytes:
    """``fields`` as JSON with ``key``'s value replaced by the raw bytes ``value``."""
    marker = "\x00MARK\x00"
    text = json.dumps({**fields, key: marker}, separators=(",", ":"))
    return text.encode().replace(json.dumps(marker).encode(), value)


def _duplicated(fields: dict[str, object], key: str, value: bytes) -> bytes:
    """``fields`` as JSON, then ``key`` once more with the raw value: the last would win."""
    text = json.dumps(fields, separators=(",", ":")).encode()
    return text[:-1] + b',"' + key.encode() + b'":' + value + b"}"


def mqtt_attacks() -> list[tuple[str, str, bytes]]:
    """Every attack as ``(event type, name, payload)``: each on each type's fields."""
    attacks: list[tuple[str, str, bytes]] = []
    for kind, fields in VALID.items():
        for name, document in {**HOSTILE_VALUES, **DOCUMENTS}.items():
            attacks.append((kind, f"document {name}", document))
        for key in fields:
            for name, value in HOSTILE_VALUES.items():
                attacks.append((kind, f"{key}={name}", _payload(fields, key, value)))
                attacks.append((kind, f"{key} twice, {name}", _duplicated(fields, key, value)))
        for name, value in HOSTILE_VALUES.items():
            attacks.append((kind, f"extra field={name}", _payload(fields, "x", value)))
    return attacks


SERIAL_VALID: Final = (
    "BET,sensor1,17,3,bonus,1,500",
    "LOCK,console,4,R-99",
    "CARD,shoe,1201,R-99,0,As",
    "DONE,shoe,1203,R-99",
    "VOID,console,5,R-99,misdeal",
    "HB,console,77",
)

SERIAL_VALUES: Final[dict[str, str]] = {
    "digits-400": "9" * 400,
    "digits-13": "9" * 13,
    "2**32": str(2**32),
    "minus-zero": "-0",
    "plus-sign": "+5",
    "underscore": "5_0",
    "float": "5.0",
    "exponent": "1e400",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "arabic-indic-digits": "\u0663\u0664",
    "fullwidth-digits": "\uff13",
    "empty": "",
    "space": " ",
    "long-field": "A" * 250,
    "json-arrays": "[" * 120 + "]" * 120,
    "nul": "a\x00b",
    "control-chars": "\x1b[2J\r\nforged log line",
    "lone-surrogate": "\ud800",
    "surrogate-escaped-byte": b"\xff".decode("utf-8", "surrogateescape"),
    "long-s": "A\u017f",
    "lower-case-card": "as",
    "ten-card": "10s",
}
"""Values for a serial field; the non-ASCII ones never pass the framer, but the decoder must
still refuse them cleanly if called with them."""


def serial_attacks() -> list[tuple[str, str]]:
    """Every serial attack as ``(name, payload)``: each value in each field of each message."""
    attacks = [
        ("2000 fields", "HB,console,77" + ",x" * 2000),
        ("2000 commas", "," * 2000),
        ("empty", ""),
        ("type only", "CARD"),
        ("json nesting", "[" * 2000 + "]" * 2000),
    ]
    for payload in SERIAL_VALID:
        fields = payload.split(",")
        for index in range(len(fields)):
            for name, value in SERIAL_VALUES.items():
                changed = [*fields[:index], value, *fields[index + 1 :]]
                attacks.append((f"{fields[0]} field {index}={name}", ",".join(changed)))
        for name, value in SERIAL_VALUES.items():
            attacks.append((f"{fields[0]} extra field={name}", f"{payload},{value}"))
    return attacks
