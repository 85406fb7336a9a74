"""The interpreter that runs the controller, by digest.

docs/operations.md, "Approving the software".

Covered: the version string; the executable (``sys.executable`` with its links resolved, since
a virtual environment's ``python`` is a link to the system's) and, when Python is built with
one, the shared ``libpython`` that holds the interpreter's code; and the standard library:
every file under its folder, compiled extension modules (``lib-dynload``) and data files
included, not only the ``.py`` files, since the import system loads all of them. Left out:
bytecode caches (the service never reads them, :mod:`controller.security.bytecode`) and the
``site-packages`` folders inside it (distributions, covered by
:mod:`controller.security.installed`). Modules frozen into the executable are covered by its digest.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.security.installed import CACHE, file_sha256, listing_digest

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

NOT_STDLIB: Final = frozenset({CACHE, "site-packages", "dist-packages"})


def _shared_library() -> Path | None:
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return None
    folder = sysconfig.get_config_var("LIBDIR")
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    if not folder or not name:
        return None
    library = Path(folder) / name
    return library.resolve() if library.exists() else None


def stdlib_folders(path: Sequence[str]) -> list[Path]:
    """The standard library's folder and any ``lib-dynload`` on the path outside it."""
    stdlib = Path(sysconfig.get_path("stdlib")).resolve()
    folders = [stdlib]
    for entry in path:
        folder = Path(entry).resolve()
        if folder.name == "lib-dynload" and not folder.is_relative_to(stdlib) and folder.is_dir():
            folders.append(folder)
    return folders


def _stdlib_files(folder: Path) -> Iterator[Path]:
    for item in sorted(folder.iterdir()):
        if item.is_dir():
            if item.name not in NOT_STDLIB:
                yield from _stdlib_files(item)
        elif item.is_file():
            yield item


def stdlib_digest(folder: Path) -> str:
    """SHA-256 over every file of a standard library folder, by relative path and content."""
    return listing_digest(
        [f"{file_sha256(file)}  {file.relative_to(folder)}" for file in _stdlib_files(folder)]
    )


def interpreter(path: Sequence[str]) -> list[tuple[str, str]]:
    """The interpreter's manifest entries: ``python:<what>`` and what it is now."""
    entries = [("python:version", sys.version)]
    if sys.executable:
        executable = Path(sys.executable).resolve()
        entries.append(("python:executable", f"{executable} sha256:{file_sha256(executable)}"))
    library = _shared_library()
    if library is not None:
        entries.append(("python:library", f"{library} sha256:{file_sha256(library)}"))
    entries += [
        (f"python:stdlib {folder}", f"sha256:{stdlib_digest(folder)}")
        for folder in stdlib_folders(path)
    ]
    return entries
