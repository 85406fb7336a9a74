"""A journal row's event, effects and time as stored: compact, and exactly their canonical text.

The hash chain covers each row's **canonical** text (:mod:`controller.journal.chain`): the event
and its effects as canonical JSON, every field written out. Most of those bytes say again what
the row says elsewhere, so the file stores less (docs/journal.md, "What a row stores"), and
reading a row gives back the canonical text byte for byte:

* **the event** leaves out what its row's columns hold (``event_id``, ``at``, ``kind``) and the
  fields at their default. A device's input whose id is ``table/device/seq``
  (:func:`controller.events.device_event_id`) leaves those three out too, and is an array of
  its other fields in their declared order, the trailing defaults cut (``["r7",3,"Ah"]`` for a
  card); any other event is an object (``{"pool_id":"p1",...}``);
* **each effect** leaves out the fields whose value its event holds under the same name (the
  table, the round, the seat of a card or a bet), and those at their default or at their type's
  zero (``0``, ``false``, ``""``, ``null``); an effect with nothing left is its tag alone
  (``"card"``);
* **the time** is a whole number of milliseconds since 1970 when the canonical text is
  ``YYYY-MM-DDTHH:MM:SS.mmmZ`` and reads back as the same text; any other text is kept as it is.

Each rule is decided from the canonical values alone, so there is one stored form for a row,
and :func:`stored` of what :func:`canonical` reads gives the stored text again: a stored text
that is not exactly that form is reported by ``jackpotd verify`` like any other edit.

The field order of the device inputs is part of the stored form: ``tests/journal`` pins it,
and changing one of those events' fields needs a migration of the rows written before.
"""

from __future__ import annotations

import functools
import re
import typing
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import msgspec
from msgspec import inspect

from controller.effects import AnyEffect, decode_effects, encode_effects
from controller.events import AnyEvent, DeviceEvent, decode_event, encode_event
from controller.journal.errors import JournalError

_ENCODER: Final = msgspec.json.Encoder(order="sorted")
_NONE: Final = object()
"""No value a missing field can be given back."""
_COLUMNS: Final = frozenset({"kind", "event_id", "at"})
"""The event's fields its row holds in columns of their own (``kind`` is the tag)."""
_BY_ID: Final = ("table_id", "device", "seq")
"""A device input's fields its id spells out."""
_OBJECT_ONLY: Final = frozenset({"agent_signature"})
"""A device input's fields its array form never holds: with one, it is stored as an object."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECONDS: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

EVENT_TYPES: Final[dict[str, type[msgspec.Struct]]] = {
    str(member.__struct_config__.tag): member for member in typing.get_args(AnyEvent)
}
EFFECT_TYPES: Final[dict[str, type[msgspec.Struct]]] = {
    str(member.__struct_config__.tag): member for member in typing.get_args(AnyEffect)
}


class FormError(JournalError, ValueError):
    """A stored text that is not a row's compact form (the journal's contents do not add up)."""


def _same(value: object, other: object) -> bool:
    """Equal and of the same type (``0 == False`` in Python, but not in the journal)."""
    return type(value) is type(other) and value == other


def _zero(kind: inspect.Type) -> object:
    """The value a field of this type is left out at, besides its default."""
    if isinstance(kind, inspect.IntType):
        return 0
    if isinstance(kind, inspect.BoolType):
        return False
    if isinstance(kind, inspect.StrType):
        return ""
    if isinstance(kind, inspect.UnionType) and any(
        isinstance(member, inspect.NoneType) for member in kind.types
    ):
        return None
    return _NONE


def _default(field: inspect.Field) -> object:
    if field.default is msgspec.NODEFAULT or field.default is msgspec.UNSET:
        return _NONE
    return msgspec.to_builtins(field.default)


@functools.cache
def _effect_fields(kind: type[msgspec.Struct]) -> tuple[tuple[str, object], ...]:
    """Each field of an effect type and the value it is left out at (:data:`_NONE`: never)."""
    info = inspect.type_info(kind)
    if not isinstance(info, inspect.StructType):  # pragma: no cover - every effect is a Struct
        raise TypeError(kind)
    fields = []
    for field in info.fields:
        fallback = _default(field)
        fields.append((field.encode_name, _zero(field.type) if fallback is _NONE else fallback))
    return tuple(fields)


@functools.cache
def _event_fields(kind: type[msgspec.Struct]) -> tuple[tuple[str, object], ...]:
    """Each stored field of an event type (not its columns) and its default (or :data:`_NONE`)."""
    info = inspect.type_info(kind)
    if not isinstance(info, inspect.StructType):  # pragma: no cover - every event is a Struct
        raise TypeError(kind)
    return tuple(
        (field.encode_name, _default(field))
        for field in info.fields
        if field.encode_name not in _COLUMNS
    )


@functools.cache
def _positional_fields(kind: type[msgspec.Struct]) -> tuple[tuple[str, object], ...]:
    """A device input's fields in its array form: all but its columns and what its id says.

    Nor its table agent's signature (``agent_signature``, ``UNSET`` unless given): an event
    that has one is stored as an object, so the array of every row without one is unchanged.
    """
    return tuple(
        (name, default)
        for name, default in _event_fields(kind)
        if name not in _BY_ID and name not in _OBJECT_ONLY
    )


def _given(event: dict[str, Any]) -> dict[str, Any]:
    """The event's values effects may take theirs from: its fields, not its tag."""
    return {name: value for name, value in event.items() if name != "kind"}


def _spelled_by_id(event: AnyEvent, values: dict[str, Any]) -> bool:
    if not isinstance(event, DeviceEvent):
        return False
    parts = event.event_id.split("/")
    return len(parts) == len(_BY_ID) and parts == [
        values.get("table_id"),
        values.get("device"),
        str(values.get("seq")),
    ]


def _event_form(event: AnyEvent, values: dict[str, Any]) -> str:
    if _spelled_by_id(event, values):
        fields = _positional_fields(type(event))
        if all(name in values for name, _ in fields) and not _OBJECT_ONLY & values.keys():
            array = [values[name] for name, _ in fields]
            while array and _same(array[-1], fields[len(array) - 1][1]):
                array.pop()
            return _ENCODER.encode(array).decode()
    kept = {
        name: values[name]
        for name, default in _event_fields(type(event))
        if name in values and not _same(values[name], default)
    }
    return _ENCODER.encode(kept).decode()


def _effect_form(effect: AnyEffect, given: dict[str, Any]) -> object:
    values = msgspec.to_builtins(effect)
    kept = {"effect": values["effect"]}
    for name, fallback in _effect_fields(type(effect)):
        if name == "effect" or name not in values:
            continue
        want = given.get(name, fallback)
        if want is _NONE or not _same(values[name], want):
            kept[name] = values[name]
    return kept["effect"] if len(kept) == 1 else kept


def stored(event: AnyEvent, effects: tuple[AnyEffect, ...] | list[AnyEffect]) -> tuple[str, str]:
    """The stored texts of an event and of its effects (see the module docstring)."""
    values = msgspec.to_builtins(event)
    given = _given(values)
    forms = [_effect_form(effect, given) for effect in effects]
    return _event_form(event, values), _ENCODER.encode(forms).decode()


def _event_values(kind: str, event_id: str, text: str) -> dict[str, Any]:
    document = msgspec.json.decode(text)
    event_type = EVENT_TYPES.get(kind)
    if event_type is None:
        raise FormError(f"no event is of kind {kind!r}")
    if isinstance(document, list):
        fields = _positional_fields(event_type)
        parts = event_id.split("/")
        if not issubclass(event_type, DeviceEvent) or len(parts) != len(_BY_ID):
            raise FormError("an array, but not a device input whose id is table/device/seq")
        if len(document) > len(fields):
            raise FormError(f"{len(document)} values, {kind} has {len(fields)}")
        values = dict(zip((name for name, _ in fields), document, strict=False))
        if not parts[2].isdigit():
            raise FormError(f"the id {event_id!r} does not end in a sequence number")
        values |= {"table_id": parts[0], "device": parts[1], "seq": int(parts[2])}
        return values
    if not isinstance(document, dict):
        raise FormError("neither an object nor an array")
    return document


def _effect_values(element: object, given: dict[str, Any]) -> dict[str, Any]:
    document = {"effect": element} if isinstance(element, str) else element
    if not isinstance(document, dict):
        raise FormError("an effect that is neither a tag nor an object")
    effect_type = EFFECT_TYPES.get(str(document.get("effect")))
    if effect_type is None:
        raise FormError(f"no effect is tagged {document.get('effect')!r}")
    values = dict(document)
    for name, fallback in _effect_fields(effect_type):
        if name not in values:
            want = given.get(name, fallback)
            if want is not _NONE:
                values[name] = want
    return values


def canonical(
    kind: str, event_id: str, at: str, event_text: str, effects_text: str
) -> tuple[AnyEvent, tuple[AnyEffect, ...]]:
    """The event and effects a row's stored texts stand for; raises :class:`FormError`.

    A stored text that decodes but is not exactly the form :func:`stored` writes is refused
    too: each row has one stored form.
    """
    try:
        values = _event_values(kind, event_id, event_text)
        values |= {"kind": kind, "event_id": event_id, "at": at}
        event = decode_event(_ENCODER.encode(values))
        given = _given(msgspec.to_builtins(event))
        elements = msgspec.json.decode(effects_text)
        if not isinstance(elements, list):
            raise FormError("the effects are not an array")
        effects = tuple(
            decode_effects(_ENCODER.encode([_effect_values(item, given) for item in elements]))
        )
    except (msgspec.MsgspecError, TypeError) as error:
        raise FormError(str(error)) from error
    if stored(event, effects) != (event_text, effects_text):
        raise FormError("not the form this version stores it in")
    return event, effects


def canonical_texts(event: AnyEvent, effects: tuple[AnyEffect, ...]) -> tuple[str, str]:
    """The canonical texts the hash chain covers."""
    return encode_event(event).decode(), encode_effects(effects).decode()


@functools.lru_cache(maxsize=4096)
def _seconds(prefix: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SS`` as seconds since 1970, if it reads back as the same text."""
    try:
        moment = datetime.fromisoformat(prefix).replace(tzinfo=UTC)
    except ValueError:
        return None
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    return seconds if _seconds_text(seconds) == prefix else None


@functools.lru_cache(maxsize=4096)
def _seconds_text(seconds: int) -> str:
    return f"{_EPOCH + timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S}"


def stored_at(at: str) -> int | str:
    """The time as stored: milliseconds since 1970 when they read back as the same text."""
    if _MILLISECONDS.fullmatch(at):
        seconds = _seconds(at[:19])
        if seconds is not None:
            return seconds * 1000 + int(at[20:23])
    return at


def at_text(value: int | str) -> str:
    """The canonical text of a stored time."""
    if isinstance(value, str):
        return value
    seconds, milliseconds = divmod(value, 1000)
    return f"{_seconds_text(seconds)}.{milliseconds:03d}Z"
