"""Every citation of a section of the project's docs names a section that is there.

Code, tests and docs explain themselves by citing a document and a section: ``docs/faults.md,
"Clock steps"``. A section renamed or removed would leave such a citation pointing at nothing,
so this test reads every citation of the form ``<path>.md, "<section>"`` (or ``<path>.md's
"<section>"``) in the tree and looks for the section in the named file: a heading that is the
section's title or starts with it (``## Clock steps: tests/...``, numbers such as ``6.`` aside),
or a bold lead-in (``**History never goes back.**``). A path is read from the repository's root,
or, for a bare ``README.md``, from the citing file's own folder upwards (a deploy kit's README).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CITATION = re.compile(
    r"((?:[\w.-]+/)*[\w.-]+\.md)(?:'s)?,?\s+(?:section\s+)?\"([^\"\n]{3,80})\"",
)
"""A document's path, then a section's title in double quotes."""

SOURCES = (
    "controller/**/*.py",
    "drivers/**/*.py",
    "tests/**/*.py",
    "bench/**/*.py",
    "docs/*.md",
    "README.md",
    "Makefile",
    "pyproject.toml",
    "systemd/*",
    "deploy/**/*",
)

_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.\s*")


def _plain(title: str) -> str:
    return _NUMBER.sub("", title).replace("`", "").strip().rstrip(".:").strip()


@cache
def sections(document: Path) -> tuple[str, ...]:
    """The titles a citation of ``document`` may name: its headings and bold lead-ins."""
    text = document.read_text(encoding="utf-8")
    headings = re.findall(r"^#+\s+(.+)$", text, flags=re.MULTILINE)
    bold = re.findall(r"\*\*([^*\n]+?)\*\*", text)
    return tuple(_plain(title) for title in (*headings, *bold))


def _named(title: str, document: Path) -> bool:
    wanted = _plain(title)
    return any(
        found == wanted or (found.startswith(wanted) and not found[len(wanted)].isalnum())
        for found in sections(document)
    )


def _candidates(path: str, citing: Path) -> list[Path]:
    if "/" in path:
        return [ROOT / path]
    return [folder / path for folder in (citing.parent, *citing.parent.parents)]


def _one_line(text: str) -> str:
    """Citations fold across lines, in comments (``#``) and docstrings alike."""
    return re.sub(r"\s*\n\s*(?:#+\s*)?", " ", text)


def citations() -> list[tuple[Path, str, str]]:
    """Every (citing file, document, section) in the tree."""
    found: list[tuple[Path, str, str]] = []
    for pattern in SOURCES:
        for citing in sorted(ROOT.glob(pattern)):
            if not citing.is_file() or citing.resolve() == Path(__file__).resolve():
                continue
            try:
                text = citing.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            found.extend(
                (citing, match.group(1), match.group(2))
                for match in CITATION.finditer(_one_line(text))
            )
    return found


def test_every_cited_section_of_the_docs_is_there() -> None:
    stale = []
    checked = 0
    for citing, path, title in citations():
        documents = [d for d in _candidates(path, citing) if d.is_file() and d.is_relative_to(ROOT)]
        if not documents:
            continue  # another project's file (a library's README), not one of ours
        checked += 1
        if not any(_named(title, document) for document in documents):
            stale.append(f"{citing.relative_to(ROOT)}: {path}, {title!r}")
    assert checked > 400  # the reader still finds the citations it is there for
    assert stale == [], "sections cited that are not there:\n" + "\n".join(stale)
