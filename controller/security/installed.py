"""What is installed on the import path, by digest.

docs/operations.md, "Approving the software".

Every distribution that :mod:`importlib.metadata` finds on the import path (the controller's
dependencies, theirs, and the tools installed beside them) is covered by its name, its version
and a digest over its files as they are on disk now. Each file its ``RECORD`` lists is read and
hashed, not taken on the RECORD's word; where the RECORD gives a hash, a file that no longer
matches it is named, so that an edited dependency file shows by name. Every other file in a
folder that installers write to (one that holds a distribution with a RECORD) belongs to no
distribution: a planted module, or a ``.pth`` file that ``site`` runs at every start. Each is
listed by itself.

Bytecode caches (``__pycache__``) are left out: the service never reads them
(:mod:`controller.security.bytecode`). Nothing is cached between runs: every digest is computed from
the files each time. That is a good part of the service's start-up on a large installation
(thousands of files), so a file's real path is worked out from its folder's, resolved once a
folder (:class:`RealPaths`); hashing them on threads was tried and gained nothing on two
shared cores (docs/benchmarks.md, "Where start-up's time goes").
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

CACHE: Final = "__pycache__"
MISSING: Final = "missing"


def file_sha256(path: Path | str, algorithm: str = "sha256") -> str:
    """The hex digest of a file, or ``missing`` when it cannot be read."""
    try:
        with open(path, "rb") as stream:  # noqa: PTH123 - a str or a Path, as given
            return hashlib.file_digest(stream, algorithm).hexdigest()
    except (OSError, ValueError):
        return MISSING


@dataclass(slots=True)
class RealPaths:
    """``os.path.realpath`` of many files, each folder's resolved once.

    A file that is no link is its real folder's entry of its name; a link is resolved whole.
    The same answers as ``os.path.realpath``, which resolves every component of every path
    anew (a quarter of the self-check's time, on thousands of files).
    """

    folders: dict[str, str] = field(default_factory=dict)

    def of(self, path: str | Path) -> str:
        """The real path of ``path``."""
        text = os.path.abspath(path)  # noqa: PTH100 - os.path throughout, as realpath
        if os.path.islink(text):  # noqa: PTH114
            return os.path.realpath(text)  # a link, resolved as it was
        folder, name = os.path.split(text)
        real = self.folders.get(folder)
        if real is None:
            real = self.folders[folder] = os.path.realpath(folder)
        return os.path.join(real, name)  # noqa: PTH118


def listing_digest(lines: Sequence[str]) -> str:
    """The SHA-256 over sorted ``digest  path`` lines: a digest of a set of files."""
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def cached(path: str | PurePosixPath) -> bool:
    """Whether a path lies in a bytecode cache folder."""
    return CACHE in PurePosixPath(path).parts


@dataclass(frozen=True, slots=True)
class Distribution:
    """One installed distribution as it is on disk now."""

    name: str
    version: str
    digest: str
    """SHA-256 over its files' paths and contents (RECORD included, caches left out)."""
    unlike_record: tuple[tuple[str, str], ...]
    """Its files that differ from the hash its RECORD gives: (path, ``changed`` or ``missing``)."""
    home: Path


@dataclass(frozen=True, slots=True)
class Installed:
    """The distributions on the import path and the files there that belong to none."""

    distributions: tuple[Distribution, ...]
    unowned: tuple[tuple[str, str], ...]
    """(absolute path, SHA-256) of each file in an install folder that no RECORD lists."""
    homes: tuple[Path, ...] = ()
    """The install folders walked for those files."""


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 normalises it (``Foo_Bar`` is ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _as_recorded(hexdigest: str) -> str:
    # RECORD holds urlsafe base64 without padding (the wheel format, PEP 376).
    return base64.urlsafe_b64encode(bytes.fromhex(hexdigest)).rstrip(b"=").decode()


def _locator(dist: metadata.Distribution) -> Callable[[PurePosixPath], str]:
    """Where each of a distribution's files is, as ``str(dist.locate_file(file))`` says.

    A distribution in a folder (``PathDistribution``, what every installer writes) locates a
    file in its metadata folder's parent: the two strings are joined once each, not built as
    three paths a file (pathlib's parsing was a third of the self-check's time).
    """
    if type(dist) is not metadata.PathDistribution:
        return lambda file: str(dist.locate_file(file))
    base = str(dist.locate_file(""))
    join = os.path.join

    def locate(file: PurePosixPath) -> str:
        text = str(file)
        return join(base, text) if text != "." else base

    return locate


def _distribution(dist: metadata.Distribution, owned: set[str], real: RealPaths) -> Distribution:
    lines: list[str] = []
    unlike: list[tuple[str, str]] = []
    locate = _locator(dist)
    for file in dist.files or ():
        if CACHE in file.parts:
            continue
        location = locate(file)
        owned.add(real.of(location))
        digest = file_sha256(location)
        lines.append(f"{digest}  {file}")
        if digest == MISSING:
            unlike.append((str(file), MISSING))
        elif file.hash is not None:
            other = digest if file.hash.mode == "sha256" else file_sha256(location, file.hash.mode)
            if other == MISSING or _as_recorded(other) != file.hash.value:
                unlike.append((str(file), "changed"))
    return Distribution(
        canonical(dist.metadata["Name"] or "unnamed"),
        dist.version,
        listing_digest(lines),
        tuple(sorted(unlike)),
        Path(str(dist.locate_file(""))).resolve(),
    )


def _walk(folder: Path) -> Iterator[str]:
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name != CACHE)
        for name in sorted(files):
            yield os.path.join(root, name)  # noqa: PTH118 - thousands of files, as strings


def installed(path: Sequence[str], folders: Sequence[str] = ()) -> Installed:
    """The distributions found on ``path`` (in import order) and the unowned files.

    ``folders``: install folders walked even if they hold no distribution with a RECORD (the
    ``site-packages`` of the service's interpreter, :mod:`controller.security.import_path`).
    """
    owned: set[str] = set()
    real = RealPaths()
    found: list[Distribution] = []
    seen: set[tuple[str, Path]] = set()
    homes = [Path(folder).resolve() for folder in folders]
    for dist in metadata.distributions(path=list(path)):
        distribution = _distribution(dist, owned, real)
        if (distribution.name, distribution.home) in seen:
            continue  # the same folder twice on the path
        seen.add((distribution.name, distribution.home))
        found.append(distribution)
        # Installers that write a RECORD write into install folders; an egg-info's home may
        # be a source checkout, which is no install folder.
        if dist.read_text("RECORD") is not None and distribution.home not in homes:
            homes.append(distribution.home)
    unowned = [
        (file, file_sha256(file))
        for home in homes
        for file in _walk(home)
        if real.of(file) not in owned
    ]
    # A zip archive on the import path is imported from like a folder.
    unowned += [(entry, file_sha256(Path(entry))) for entry in path if Path(entry).is_file()]
    return Installed(tuple(found), tuple(sorted(set(unowned))), tuple(homes))
