"""The import path the service runs with, worked out before any code from it runs.

docs/security.md section 2.4. The service's interpreter starts isolated and without ``site``
(``-I -S``, :mod:`controller.security.bytecode`): no ``PYTHON*`` variable, no user site folder,
no script folder, no ``.pth`` file and no ``sitecustomize`` reach it, and its import path
holds the standard library alone. This module then works out, with the standard library only
and without running anything, what ``site`` would have added: the install folders
(``site-packages``) of the interpreter's virtual environment, and the folders the path lines
of their ``.pth`` files name. Each ``.pth`` file is read once and kept, bytes and digest, so
that the one that is checked is the one whose import lines may run later; its import lines
are code, and they run only once the self-check has approved it (``controller/__main__.py``).

The same plan, worked out in any process, is what ``jackpotd manifest approve`` and ``check``
cover, so that an approval made from a shell covers the path the service will have, not the
shell's (whose ``PYTHONPATH`` the service never sees).
"""

# os.path, as site works: the entries are strings, made absolute, never resolved.
# ruff: noqa: PTH100, PTH110, PTH112, PTH113, PTH118, PTH120, PTH123, PTH208

from __future__ import annotations

import hashlib
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from importlib import machinery
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

PTH: Final = ".pth"
CACHE: Final = "__pycache__"
CONFIG: Final = "pyvenv.cfg"
IMPORT_LINE: Final = ("import ", "import\t")
"""A ``.pth`` line that ``site`` executes rather than adds to the path."""
SUFFIXES: Final = tuple(machinery.all_suffixes())
"""What the import system loads a module from (``.py``, ``.pyc``, extension modules)."""


@dataclass(frozen=True, slots=True)
class PthFile:
    """One ``.pth`` file of an install folder, as read once: what ``site`` would do with it."""

    file: str
    content: bytes
    digest: str
    folders: tuple[str, ...]
    """The existing folders its path lines name, in its order."""
    imports: tuple[str, ...]
    """Its import lines: code, run at start-up by ``site``."""


@dataclass(frozen=True, slots=True)
class ImportPath:
    """The service's import path, in order, and where each entry comes from."""

    entries: tuple[str, ...]
    stdlib: tuple[str, ...]
    install_folders: tuple[str, ...]
    pth_files: tuple[PthFile, ...]

    def kind(self, entry: str) -> str:
        """``standard library``, ``install folder`` or ``folder`` (any other entry)."""
        if entry in self.stdlib:
            return "standard library"
        return "install folder" if entry in self.install_folders else "folder"


def stdlib_entries() -> list[str]:
    """The entries an isolated interpreter without ``site`` starts with (as ``getpath`` does)."""
    version = f"{sys.version_info[0]}{sys.version_info[1]}"
    # The base prefixes: a virtual environment has no standard library of its own.
    platstdlib = sysconfig.get_path("platstdlib", vars={"platbase": sys.base_exec_prefix})
    return [
        os.path.join(sys.base_prefix, sys.platlibdir, f"python{version}.zip"),
        sysconfig.get_path("stdlib"),
        os.path.join(platstdlib, "lib-dynload"),
    ]


def environment_prefixes() -> list[str]:
    """The prefixes whose install folders ``site`` adds.

    The virtual environment's, as its ``pyvenv.cfg`` says (``site`` reads it, not the
    interpreter), else the base prefix.
    """
    home = os.path.dirname(os.path.abspath(sys.executable))
    for folder in (home, os.path.dirname(home)):
        config = os.path.join(folder, CONFIG)
        if os.path.isfile(config):
            prefix = os.path.dirname(home)
            settings: dict[str, str] = {}
            with open(config, encoding="utf-8") as stream:
                for line in stream:
                    key, equals, value = line.partition("=")
                    if equals:
                        settings[key.strip().lower()] = value.strip().lower()
            system = settings.get("include-system-site-packages", "false") == "true"
            return [prefix, sys.base_prefix] if system else [prefix]
    return [sys.base_prefix]


def install_folders() -> list[str]:
    """The ``site-packages`` folders that ``site`` would add, in its order."""
    folders = site.getsitepackages(environment_prefixes())
    return [os.path.abspath(folder) for folder in folders if os.path.isdir(folder)]


def _lines(content: bytes) -> list[str]:
    try:
        return content.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        return []  # site would stop at its first bad line; none of it runs here


def read_pth(folder: str, known: set[str]) -> list[PthFile]:
    """Every ``.pth`` file of an install folder, in ``site``'s order, read once, never run."""
    found = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(PTH):
            continue
        file = os.path.join(folder, name)
        try:
            content = Path(file).read_bytes()
        except OSError:
            continue  # site skips a file it cannot open
        folders, imports = [], []
        for line in _lines(content):
            if line.startswith("#") or not line.strip():
                continue
            if line.startswith(IMPORT_LINE):
                imports.append(line)
                continue
            named = os.path.abspath(os.path.join(folder, line.rstrip()))
            if os.path.realpath(named) not in known and os.path.exists(named):
                known.add(os.path.realpath(named))
                folders.append(named)
        digest = hashlib.sha256(content).hexdigest()
        found.append(PthFile(file, content, digest, tuple(folders), tuple(imports)))
    return found


def planned(root: str, stdlib: Sequence[str] | None = None) -> ImportPath:
    """The service's import path, worked out without importing or executing anything.

    The standard library; ``root`` (the folder that holds the ``controller`` package run)
    unless ``site`` would add it anyway; each install folder followed by the folders its
    ``.pth`` files name (as ``site.addsitedir`` orders them).
    """
    base = tuple(stdlib_entries() if stdlib is None else stdlib)
    known = {os.path.realpath(entry) for entry in base}
    folders = install_folders()
    added: list[str] = []
    pth_files: list[PthFile] = []
    for folder in folders:
        if os.path.realpath(folder) not in known:
            added.append(folder)
            known.add(os.path.realpath(folder))
        files = read_pth(folder, known)
        pth_files += files
        added += [named for pth in files for named in pth.folders]
    # A copy of the software run from a folder of its own goes first, as PYTHONPATH would.
    first = [root] if os.path.realpath(root) not in known else []
    return ImportPath((*base, *first, *added), base, tuple(folders), tuple(pth_files))


def described(entries: Sequence[str]) -> ImportPath:
    """An import path as it is (this process's, or one given), described.

    What each entry is, and the ``.pth`` files of the install folders on it, read as
    :func:`planned` reads them.
    """
    on_path = {os.path.realpath(entry) for entry in entries}
    folders = [folder for folder in install_folders() if os.path.realpath(folder) in on_path]
    known = set(on_path)
    pth_files = [pth for folder in folders for pth in read_pth(folder, known)]
    return ImportPath(tuple(entries), tuple(stdlib_entries()), tuple(folders), tuple(pth_files))


def service_path() -> ImportPath:
    """The import path the service runs with.

    This process's own when it was started as the service is (without ``site``: its path was
    set from :func:`planned`), else the plan.
    """
    if sys.flags.no_site:
        return described(sys.path)
    return planned(package_root())


def package_root() -> str:
    """The folder that holds the ``controller`` package this process runs."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _module(name: str) -> bool:
    suffix = next((suffix for suffix in SUFFIXES if name.endswith(suffix)), None)
    stem = name.removesuffix(suffix) if suffix else ""
    return bool(stem) and "." not in stem


def _package_files(package: Path) -> Iterator[Path]:
    for root, folders, files in os.walk(package):
        folders[:] = sorted(name for name in folders if "." not in name and name != CACHE)
        yield from (Path(root) / name for name in sorted(files) if _module(name))


def importable(entry: Path, skip: Sequence[str] = ()) -> Iterator[Path]:
    """What a path entry offers to import.

    Each top-level module file, every module file of each regular package (a folder with an
    ``__init__``), and each namespace package folder (one without), which becomes code the day
    an ``__init__`` is put in it.

    A module's name has no dot, so neither has a folder on its way nor a file's stem. ``skip``:
    top-level names covered elsewhere (the controller's own packages). Bytecode caches are
    never read by the service.
    """
    for item in sorted(entry.iterdir()):
        name = item.name
        if item.is_file() and _module(name):
            yield item
        elif item.is_dir() and "." not in name and name != CACHE and name not in skip:
            if any(_module(file.name) and file.stem == "__init__" for file in item.iterdir()):
                yield from _package_files(item)
            else:
                yield item


def run_import_lines(path: ImportPath) -> None:
    """Run the import lines of the ``.pth`` files as they were read, as ``site`` would have.

    Only once the manifest that holds their digests matched the approved one
    (controller/cli/launch.py). A line that fails ends its file, as in ``site``.
    """
    for pth in path.pth_files:
        for line in pth.imports:
            try:
                exec(line, {"__name__": "site"})  # noqa: S102 - approved .pth code, as site runs it
            except Exception as error:  # noqa: BLE001 - site reports and goes on
                print(f"Error processing a line of {pth.file}: {error!r}", file=sys.stderr)  # noqa: T201
                break
