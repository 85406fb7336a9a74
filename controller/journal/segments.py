"""An archive segment: journal rows moved out of the live file, sealed, in gzip'd JSON lines.

A segment holds a run of rows, ``first_seq`` to ``last_seq``, as their **canonical** columns
(:mod:`controller.journal.rows`: the texts the hash chain covers, not the compact form of the
file), one JSON object a line, in a gzip file named ``journal-<first>-<last>.jsonl.gz``
(docs/journal.md, "Archives"):

1. a header: ``{"segment": "jackpotd journal segment v1", "first_seq": F, "prev_hash": H}``,
   the hash row F chains to;
2. one line a row: ``seq``, ``event_id``, ``kind``, ``at``, ``event``, ``outcome``,
   ``reason``, ``effects`` and ``hash`` (each row's ``prev_hash`` is the hash of the line
   before, or the header's), and ``provenance``: which intake or command journaled it
   (docs/journal.md, "Provenance"; null if the journal recorded none). The hash chain does not
   cover it, but the trailer's digest of the lines and the live journal's digest of the file
   do: once archived it can no longer be edited unseen. A segment written before provenance
   was carried has none on its lines, and reads null;
3. a trailer: ``last_seq``, ``last_hash``, ``rows``, ``lines_sha256`` (the SHA-256 of every
   line before it, newlines included), ``state_digest`` (the digest of the ledger's state after
   row ``last_seq``, :mod:`controller.ledger.snapshot`) and ``checkpoint``: the canonical text
   of the controller's signed checkpoint of that row and state, or null if the journal had none.

The live journal records each segment: its name, range, first and last hashes, rows, the
SHA-256 of the file, and the state after its last row (:mod:`controller.journal.archive`). So
a segment is checked three ways: the file's digest against the record, its lines against its
trailer, and its rows against the chain, which the live journal continues from ``last_hash``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from controller.files import RECORD, create_file
from controller.journal.errors import JournalError
from controller.journal.provenance import PROVENANCE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

FORMAT: Final = "jackpotd journal segment v1"
ROW_FIELDS: Final = (
    "seq", "event_id", "kind", "at", "event", "outcome", "reason", "effects", "hash",
)  # fmt: skip
_READ: Final = 1 << 20


class SegmentError(JournalError):
    """A segment that cannot be read as one; the message names the file and why."""


@dataclass(frozen=True, slots=True)
class Sealed:
    """What a segment written says of itself, as the live journal records it."""

    segment: str
    """The file's name."""
    first_seq: int
    last_seq: int
    prev_hash: str
    last_hash: str
    rows: int
    sha256: str


def segment_name(first_seq: int, last_seq: int) -> str:
    """The file name of the segment of rows ``first_seq`` to ``last_seq``."""
    return f"journal-{first_seq:012d}-{last_seq:012d}.jsonl.gz"


def _line(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_READ):
            digest.update(chunk)
    return digest.hexdigest()


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_segment(
    directory: Path,
    rows: Iterable[dict[str, Any]],
    *,
    start: tuple[int, str],
    end: Callable[[], tuple[str, str | None]],
) -> Sealed:
    """Write the canonical rows to a new segment in ``directory``, durably; return its seal.

    ``start``: the first row's ``seq`` and the hash it chains to; ``end``, called once the rows
    are written: the digest of the state after the last and the signed checkpoint of it (text),
    if any. The file is written under a temporary name, synced, and renamed: a segment either
    exists whole or not at all. A segment of the same rows already there is kept if it has the
    same bytes (an archive that failed before recording it), and refused otherwise.
    """
    first_seq, prev_hash = start
    directory.mkdir(parents=True, exist_ok=True)
    temporary = directory / f".journal-{first_seq:012d}.partial"
    lines = hashlib.sha256()
    count, last_seq, last_hash = 0, first_seq - 1, prev_hash
    # At RECORD (0640) whatever the umask, a stale partial included: the rename keeps it.
    with (
        create_file(temporary, RECORD) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as file,
    ):
        header = _line({"segment": FORMAT, "first_seq": first_seq, "prev_hash": prev_hash})
        _emit(file, lines, header)
        for row in rows:
            line = {name: row[name] for name in ROW_FIELDS}
            _emit(file, lines, _line({**line, PROVENANCE: row.get(PROVENANCE)}))
            count, last_seq, last_hash = count + 1, int(row["seq"]), str(row["hash"])
        state_digest, checkpoint = end()
        trailer = {
            "last_seq": last_seq,
            "last_hash": last_hash,
            "rows": count,
            "lines_sha256": lines.hexdigest(),
            "state_digest": state_digest,
            "checkpoint": checkpoint,
        }
        file.write(_line(trailer))
        file.close()
        raw.flush()
        os.fsync(raw.fileno())
    name = segment_name(first_seq, last_seq)
    target, digest = directory / name, file_sha256(temporary)
    if target.exists():
        # The same bytes: an archive that failed before recording it wrote it. Other bytes: a
        # segment of another journal, never overwritten.
        temporary.unlink()
        if file_sha256(target) != digest:
            raise JournalError(
                f"{target}: another segment of these rows is there (another journal's?); "
                "nothing archived"
            )
    else:
        temporary.rename(target)
        _sync_directory(directory)
    return Sealed(name, first_seq, last_seq, prev_hash, last_hash, count, digest)


def _emit(file: gzip.GzipFile, lines: Any, line: bytes) -> None:  # noqa: ANN401 - a hashlib object
    lines.update(line)
    file.write(line)


@dataclass(frozen=True, slots=True)
class Trailer:
    """A segment's trailer: what it says of its end."""

    last_seq: int
    last_hash: str
    rows: int
    state_digest: str
    checkpoint: str | None


@dataclass(slots=True)
class SegmentReader:
    """The rows of a segment file, read in order, each as its canonical columns.

    Iterate :meth:`rows`; then :attr:`trailer` holds the trailer, and :attr:`problems` what
    did not hold: the header, the trailer, the count or the digest of the lines.
    """

    path: Path
    first_seq: int = 0
    prev_hash: str = ""
    trailer: Trailer | None = None
    problems: list[str] | None = None

    def rows(self) -> Iterator[dict[str, Any]]:
        """Each row's canonical columns and ``prev_hash``; raises SegmentError if unreadable."""
        self.problems = []
        where = self.path.name
        lines = hashlib.sha256()
        try:
            with gzip.open(self.path, "rb") as file:
                first = file.readline()
                header = self._document(first, "its header")
                if header.get("segment") != FORMAT:
                    raise SegmentError(f"segment {where}: not a {FORMAT} file")
                lines.update(first)
                self.first_seq = int(header["first_seq"])
                previous = self.prev_hash = str(header["prev_hash"])
                for count, line in enumerate(file):
                    document = self._document(line, f"line {count + 2}")
                    if "seq" not in document:
                        self._close(document, lines.hexdigest(), count)
                        return
                    lines.update(line)
                    yield {
                        **{name: document[name] for name in ROW_FIELDS},
                        PROVENANCE: document.get(PROVENANCE),
                        "prev_hash": previous,
                    }
                    previous = str(document["hash"])
        except (OSError, EOFError, KeyError, TypeError, ValueError) as error:
            raise SegmentError(f"segment {where}: cannot be read: {error}") from error
        self.problems.append(f"segment {where}: it has no trailer: its end was cut off")

    def _document(self, line: bytes, what: str) -> dict[str, Any]:
        document = json.loads(line)
        if not isinstance(document, dict):
            raise SegmentError(f"segment {self.path.name}: {what} is not a JSON object")
        return document

    def _close(self, document: dict[str, Any], digest: str, count: int) -> None:
        trailer = Trailer(
            int(document["last_seq"]),
            str(document["last_hash"]),
            int(document["rows"]),
            str(document["state_digest"]),
            None if document.get("checkpoint") is None else str(document["checkpoint"]),
        )
        self.trailer = trailer
        problems = self.problems if self.problems is not None else []
        where = self.path.name
        if document.get("lines_sha256") != digest:
            problems.append(
                f"segment {where}: its lines are not those its trailer sealed (SHA-256 differs)"
            )
        if trailer.rows != count:
            problems.append(f"segment {where}: holds {count} rows, its trailer says {trailer.rows}")
