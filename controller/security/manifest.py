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
  :mod:`controller.security.interpreter`);
* every entry of the import path the service runs with (``import:<entry>``: its position and
  what it is), every ``.pth`` file of its install folders (``pth:<file>``, by content: ``site``
  would run its import lines), and each file that could be imported from an entry that is
  neither the standard library nor an install folder (``path:<file>``): a folder a ``.pth``
  line names, for one (:mod:`controller.security.import_path`).

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
import os
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller import __version__
from controller.security.import_path import (
    ImportPath,
    described,
    importable,
    package_root,
    service_path,
)
from controller.security.installed import CACHE, Installed, file_sha256, installed
from controller.security.interpreter import interpreter

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.resources.abc import Traversable

PACKAGES: Final = ("controller", "drivers")
DIST: Final = "dist:"
PATH: Final = "path:"
PYTHON: Final = "python:"
IMPORT: Final = "import:"
PTH: Final = "pth:"
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
        if key.startswith(IMPORT):
            entry = key.removeprefix(IMPORT)
            if then is None or now is None:
                return f"an import path entry {_verb(then, now)}: {entry} ({now or then})"
            return f"the import path entry {entry} changed: approved {then}, now {now}"
        if key.startswith(PTH):
            return f"a .pth file {_verb(then, now)}: {key.removeprefix(PTH)}"
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
        (
            rank
            for rank, prefix in enumerate((PYTHON, IMPORT, PTH, DIST, PATH))
            if key.startswith(prefix)
        ),
        5,
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


def _distribution_entries(found: Installed, pth: frozenset[str]) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    names: set[str] = set()
    for dist in found.distributions:
        # A second copy further down the path still provides whatever the first lacks.
        key = dist.name if dist.name not in names else f"{dist.name} ({dist.home})"
        names.add(dist.name)
        entries.append((f"{DIST}{key}", f"{dist.version} sha256:{dist.digest}"))
    # A .pth file of an install folder is named as one (below), owned or not.
    entries += [(f"{PATH}{file}", digest) for file, digest in found.unowned if file not in pth]
    return entries


def _path_entries(path: ImportPath, found: Installed) -> list[tuple[str, str]]:
    """Each import path entry, each ``.pth`` file, and what an ordinary folder could import."""
    entries = [(f"{PTH}{pth.file}", f"sha256:{pth.digest}") for pth in path.pth_files]
    homes = {str(home) for home in found.homes}
    root = os.path.realpath(package_root())
    for position, entry in enumerate(path.entries):
        kind, place = path.kind(entry), Path(entry)
        if not place.exists():
            kind = "absent"
        elif place.is_file():
            kind = f"file sha256:{file_sha256(place)}"
        elif kind == "folder" and os.path.realpath(entry) not in homes:
            skip = PACKAGES if os.path.realpath(entry) == root else ()
            entries += [
                (f"{PATH}{item}", "namespace package" if item.is_dir() else file_sha256(item))
                for item in importable(place, skip)
            ]
        entries.append((f"{IMPORT}{entry}", f"{position} {kind}"))
    return entries


@dataclass(slots=True)
class _Launch:
    """The manifest the launcher hashed, before anything of the import path ran (once)."""

    manifest: Manifest | None = None


_LAUNCH = _Launch()


def hashed_at_launch(manifest: Manifest) -> None:
    """Keep the manifest the launcher hashed, for the service's self-check.

    ``controller/__main__.py`` hashed it before any code but the standard library's and this
    package's ran: the self-check compares that one (the first :func:`current` of the process
    takes it), not one hashed after the dependencies ran.
    """
    _LAUNCH.manifest = manifest


def current(
    configuration_digest: str,
    path: Sequence[str] | None = None,
    *,
    import_path: ImportPath | None = None,
) -> Manifest:
    """The manifest of what is installed now.

    On the import path the service runs with (:func:`controller.security.import_path.
    service_path`), on ``path``, or on ``import_path`` as planned (its ``.pth`` files as they
    were read then).
    """
    if path is None and import_path is None and _LAUNCH.manifest is not None:
        launched, _LAUNCH.manifest = _LAUNCH.manifest, None
        return replace(launched, configuration=configuration_digest)
    if import_path is None:
        import_path = service_path() if path is None else described(list(path))
    entries = list(import_path.entries)
    found = installed(entries, import_path.install_folders)
    pth = frozenset(pth.file for pth in import_path.pth_files)
    files = tuple(
        sorted(
            {
                *software_files(),
                *_distribution_entries(found, pth),
                *interpreter(entries),
                *_path_entries(import_path, found),
            }
        )
    )
    # JSON, since a value may hold spaces or a newline (sys.version does on some builds).
    software = hashlib.sha256(json.dumps(files).encode()).hexdigest()
    unlike = tuple(
        (dist.name, file, how) for dist in found.distributions for file, how in dist.unlike_record
    )
    return Manifest(__version__, software, configuration_digest, files, unlike)
