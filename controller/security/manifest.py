"""The start-up self-check: digests of the running code and of the configuration.

docs/operations.md, "Approving the software": at start-up the controller checks its own software and
configuration and refuses to run on a mismatch. The manifest is one entry per thing that can change
what runs:

* every file of the ``controller`` and ``drivers`` packages (``controller/ledger/apply.py``),
  whatever its suffix, since an extension module or a sourceless ``.pyc`` beside a source is
  imported too;
* every installed distribution on the import path, dependencies included (``dist:<name>``:
  its version and a digest over its files, :mod:`controller.security.installed`), and each file in
  an install folder that belongs to no distribution (``path:<file>``);
* the interpreter (``python:<what>``: version, executable, libpython, standard library,
  :mod:`controller.security.interpreter`).

Bytecode caches are in none of them: the service runs without one
(:mod:`controller.security.bytecode`). The software digest is the SHA-256 over the sorted entries;
the configuration digest is the SHA-256 of the configuration file. A manager approves both
(``jackpotd manifest approve``), which is journaled; ``jackpotd run`` refuses to start without an
approval, or when anything differs, naming each difference. ``jackpotd version --verbose`` prints
every entry.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from controller import __version__
from controller.security.installed import CACHE, Installed, installed
from controller.security.interpreter import interpreter

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.resources.abc import Traversable

PACKAGES: Final = ("controller", "drivers")
DIST: Final = "dist:"
PATH: Final = "path:"
PYTHON: Final = "python:"
LISTED: Final = 10
"""How many differences one line of the start-up error names (``manifest check`` lists all)."""


@dataclass(frozen=True, slots=True)
class ApprovedManifest:
    """A manifest as approved and journaled."""

    version: str
    software: str
    configuration: str
    files: tuple[tuple[str, str], ...]
    by: str


CONFIGURATIONS_SEPARATOR = ","
"""Between the digests of an approval that names several nodes' configurations."""


def approved_configurations(approved: ApprovedManifest) -> frozenset[str]:
    """The configurations an approval covers: one, or each node's of a cluster.

    A cluster's nodes run one software but each its own file (its node name, its addresses:
    deploy/ha/), and any of them may take the sequencer over: a manager approves them together,
    in one signed approval whose ``configuration`` is their digests, sorted, comma-separated
    (docs/ha.md, "Approving a cluster"). A later approval replaces the whole set.
    """
    return frozenset(filter(None, approved.configuration.split(CONFIGURATIONS_SEPARATOR)))


@dataclass(frozen=True, slots=True)
class Manifest:
    """What is installed and configured, by digest."""

    version: str
    software: str
    configuration: str
    files: tuple[tuple[str, str], ...]
    unlike_record: tuple[tuple[str, str, str], ...] = ()
    """Installed files that differ from their distribution's RECORD: (name, file, how)."""

    def changes(self, approved: ApprovedManifest) -> list[str]:
        """Each entry that differs from the approved manifest, in words, interpreter first."""
        ours, theirs = dict(self.files), dict(approved.files)
        keys = sorted(ours.keys() | theirs.keys(), key=lambda key: (_rank(key), key))
        return [
            self._describe(key, theirs.get(key), ours.get(key))
            for key in keys
            if ours.get(key) != theirs.get(key)
        ]

    def record_problems(self, approved: ApprovedManifest | None = None) -> list[str]:
        """Installed files that no longer match their distribution's own RECORD.

        Given the approved manifest, only those of distributions that it approved as they are
        now (edited before the approval): the others are named among the changes.
        """
        theirs = dict(approved.files) if approved is not None else {}
        ours = dict(self.files)
        return [
            f"distribution {name}: {file} {how} (its RECORD)"
            for name, file, how in self.unlike_record
            if approved is None or ours.get(DIST + name) == theirs.get(DIST + name)
        ]

    def itemized(self, approved: ApprovedManifest) -> list[str]:
        """Every difference from an approved manifest, one a line (``jackpotd manifest check``)."""
        changes = self.changes(approved) if self.software != approved.software else []
        return [*changes, *self.record_problems(approved), *self._configuration(approved)]

    def differences(self, approved: ApprovedManifest) -> list[str]:
        """What differs from an approved manifest, one line per part (empty when nothing does)."""
        problems = []
        changes = self.changes(approved) if self.software != approved.software else []
        if changes:
            problems.append(
                f"the software differs from the approved manifest (version {approved.version}): "
                + _some(changes)
            )
        unrecorded = self.record_problems(approved)
        if unrecorded:
            problems.append("installed files differ from their RECORD: " + _some(unrecorded))
        return problems + self._configuration(approved)

    def _configuration(self, approved: ApprovedManifest) -> list[str]:
        if self.configuration not in approved_configurations(approved):
            return ["the configuration file differs from the approved one"]
        return []

    def _describe(self, key: str, then: str | None, now: str | None) -> str:
        if key.startswith(DIST):
            return self._distribution(key.removeprefix(DIST), then, now)
        if key.startswith(PYTHON):
            what = key.removeprefix(PYTHON)
            return f"the interpreter's {what} changed: approved {_short(then)}, now {_short(now)}"
        if key.startswith(PATH):
            return f"a file of no distribution {_verb(then, now)}: {key.removeprefix(PATH)}"
        return f"file {_verb(then, now)}: {key}"

    def _distribution(self, name: str, then: str | None, now: str | None) -> str:
        if then is None or now is None:
            version = (now or then or "").split(" ")[0]
            return f"distribution {_verb(then, now)}: {name} {version}"
        version, approved_version = now.split(" ")[0], then.split(" ")[0]
        if version != approved_version:
            return f"distribution {name}: version {approved_version} became {version}"
        named = [f"{file} {how}" for dist, file, how in self.unlike_record if dist == name]
        if named:
            return f"distribution {name} {version}: " + ", ".join(named)
        return f"distribution {name} {version}: its files changed (and its RECORD with them)"


def _rank(key: str) -> int:
    return next(
        (rank for rank, prefix in enumerate((PYTHON, DIST, PATH)) if key.startswith(prefix)), 3
    )


def _verb(then: str | None, now: str | None) -> str:
    return "added" if then is None else "removed" if now is None else "changed"


def _short(value: str | None) -> str:
    if value is None:
        return "none"
    return re.sub(r"\b([0-9a-f]{12})[0-9a-f]{52}\b", r"\1…", value)


def _some(items: list[str]) -> str:
    more = len(items) - LISTED
    return "; ".join(items[:LISTED]) + (
        f"; and {more} more (jackpotd manifest check)" if more > 0 else ""
    )


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, str]]:
    found = []
    for entry in folder.iterdir():
        name = f"{prefix}/{entry.name}"
        if entry.is_dir():
            if entry.name != CACHE:
                found += _walk(entry, name)
        elif entry.is_file():
            found.append((name, hashlib.sha256(entry.read_bytes()).hexdigest()))
    return found


def software_files() -> tuple[tuple[str, str], ...]:
    """Every installed file of the controller's packages with its SHA-256, sorted."""
    files: list[tuple[str, str]] = []
    for package in PACKAGES:
        files += _walk(resources.files(package), package)
    return tuple(sorted(files))


def _distribution_entries(found: Installed) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    names: set[str] = set()
    for dist in found.distributions:
        # A second copy further down the path still provides whatever the first lacks.
        key = dist.name if dist.name not in names else f"{dist.name} ({dist.home})"
        names.add(dist.name)
        entries.append((f"{DIST}{key}", f"{dist.version} sha256:{dist.digest}"))
    entries += [(f"{PATH}{file}", digest) for file, digest in found.unowned]
    return entries


def current(configuration_digest: str, path: Sequence[str] | None = None) -> Manifest:
    """The manifest of what is installed now (on ``path``, the import path by default)."""
    path = list(sys.path if path is None else path)
    found = installed(path)
    files = tuple(sorted([*software_files(), *_distribution_entries(found), *interpreter(path)]))
    # JSON, since a value may hold spaces or a newline (sys.version does on some builds).
    software = hashlib.sha256(json.dumps(files).encode()).hexdigest()
    unlike = tuple(
        (dist.name, file, how) for dist in found.distributions for file, how in dist.unlike_record
    )
    return Manifest(__version__, software, configuration_digest, files, unlike)
