"""The paytables one configuration file names: found, read once, and the same text everywhere.

A slot of the file (a pool's ``paytable``, a table's ``bonus``) names a paytable by name
(``controller.paytable_dirs`` first, then the seeds) or by ``.toml`` path. :class:`Paytables`
reads each once, refuses a sample or one of another wager than the slot takes, and refuses two
different files of one name (the journal keeps a paytable's text by its name).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import TYPE_CHECKING, Final

from controller.config.schema import PaytableRef
from controller.rules.paytable_files import SAMPLES, PaytableError, parse_paytable

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable
    from pathlib import Path

    from controller.config.values import Checker
    from controller.rules.paytable import Wager

_PAYTABLE_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class Paytables:
    """The paytables a file has named so far, and where it looks for the others."""

    def __init__(self, checks: Checker, dirs: tuple[Path, ...]) -> None:
        self.checks = checks
        self.dirs = dirs
        self.refs: dict[str, PaytableRef] = {}
        self.first_use: dict[str, tuple[str, str]] = {}

    def find(self, key: str, ref: str, wagers: frozenset[Wager]) -> PaytableRef:
        """A paytable by name (``paytable_dirs``, then the seeds) or by ``.toml`` path."""
        fail = self.checks.fail
        found = self.refs.get(ref) or self.read(key, ref)
        self.refs[ref] = found
        if found.paytable.sample:
            raise fail(
                key,
                f"{found.name} is a sample, not a filed paytable: file your own in "
                "controller.paytable_dirs (docs/paytables.md)",
            )
        if found.paytable.wager not in wagers:
            wanted = " or ".join(sorted(wagers))
            raise fail(key, f"{found.name} is for the {found.paytable.wager} wager, not {wanted}")
        first_key, first_text = self.first_use.setdefault(found.name, (key, found.text))
        if first_text != found.text:
            raise fail(key, f"{ref} is another paytable named {found.name} than {first_key}")
        return found

    def read(self, key: str, ref: str) -> PaytableRef:
        """A paytable by name or path, of one of the wagers a slot takes."""
        fail = self.checks.fail
        seeds = resources.files("controller") / "paytables"
        seed = seeds / f"{ref}.toml"
        if ref.endswith(".toml"):
            file: Traversable | None = self.checks.path(ref)
        elif _PAYTABLE_NAME.match(ref):
            candidates: list[Traversable] = [d / f"{ref}.toml" for d in self.dirs]
            sample = seeds / SAMPLES / f"{ref}.toml"  # found only to be refused by name
            file = next((c for c in [*candidates, seed, sample] if c.is_file()), None)
        else:
            raise fail(key, f"{ref!r} is neither a paytable name nor a .toml path")
        if file is None:
            known = ", ".join(sorted(e.name.removesuffix(".toml") for e in seeds.iterdir()))
            where = "controller.paytable_dirs or " if self.dirs else ""
            raise fail(key, f"no paytable {ref!r} in {where}the seeds ({known})")
        origin = "seed" if file is seed else str(file)
        try:
            text = file.read_text(encoding="utf-8")
            paytable = parse_paytable(text, f"seed paytable {ref}" if file is seed else origin)
        except OSError as error:
            raise fail(key, f"cannot read {file}: {error.strerror}") from error
        except PaytableError as error:
            raise fail(key, str(error)) from error
        if paytable.name != file.name.removesuffix(".toml"):
            raise fail(key, f"{file}: name: {paytable.name!r} does not match the file name")
        return PaytableRef(paytable, text, origin)
