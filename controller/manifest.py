"""The start-up self-check: hashes of the installed software and of the configuration.

BRIEF §3: at start-up the controller checks its own software and configuration and refuses to
run on a mismatch. The software digest is the SHA-256 over the sorted list of every installed
file of the ``controller`` and ``drivers`` packages with its own SHA-256 (paytables and the
display page included); the configuration digest is the SHA-256 of the configuration file.
A manager approves the pair (``jackpotd manifest approve``), which is journaled; from then on
``jackpotd run`` refuses to start if either differs, naming which one and the files that
changed. ``jackpotd version --verbose`` prints the digests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from controller import __version__

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

PACKAGES: Final = ("controller", "drivers")
SUFFIXES: Final = (".py", ".toml", ".html")


@dataclass(frozen=True, slots=True)
class Manifest:
    """What is installed and configured, by digest."""

    version: str
    software: str
    configuration: str
    files: tuple[tuple[str, str], ...]

    def differences(self, approved: ApprovedManifest) -> list[str]:
        """What differs from an approved manifest, in words (empty when nothing does)."""
        problems = []
        if self.software != approved.software:
            ours, theirs = dict(self.files), dict(approved.files)
            changed = sorted(p for p in ours.keys() | theirs.keys() if ours.get(p) != theirs.get(p))
            problems.append(
                f"the software differs from the approved manifest (version {approved.version}): "
                + (", ".join(changed[:10]) or "files changed")
            )
        if self.configuration != approved.configuration:
            problems.append("the configuration file differs from the approved one")
        return problems


@dataclass(frozen=True, slots=True)
class ApprovedManifest:
    """A manifest as approved and journaled."""

    version: str
    software: str
    configuration: str
    files: tuple[tuple[str, str], ...]
    by: str


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, str]]:
    found = []
    for entry in folder.iterdir():
        name = f"{prefix}/{entry.name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                found += _walk(entry, name)
        elif entry.name.endswith(SUFFIXES):
            found.append((name, hashlib.sha256(entry.read_bytes()).hexdigest()))
    return found


def software_files() -> tuple[tuple[str, str], ...]:
    """Every installed file of the controller's packages with its SHA-256, sorted."""
    files: list[tuple[str, str]] = []
    for package in PACKAGES:
        files += _walk(resources.files(package), package)
    return tuple(sorted(files))


def current(configuration_digest: str) -> Manifest:
    """The manifest of what is installed now, with the given configuration digest."""
    files = software_files()
    listing = "\n".join(f"{digest}  {path}" for path, digest in files)
    software = hashlib.sha256(listing.encode()).hexdigest()
    return Manifest(__version__, software, configuration_digest, files)
