"""docs/wide-area.md, "Restoring a property": central writes out the head it keeps of a property.

Central's file of its properties' heads (controller/journal/high_water.py, as its site links
write it) holds a property's signed head; ``jackpotd site-head`` writes it as the property's
high-water file, which ``accept-restore --mark`` reads like its own: the same head, its
signature still the property's key's. A site central keeps no head of is refused in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.cli.cli_runs import run

from controller.journal.high_water import (
    head_verifies,
    read_high_water,
    sign_head,
    write_site_heads,
)
from controller.security.controller_key import ControllerKey

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

AT = "2026-12-01T09:00:00.000Z"


def test_site_head_writes_the_kept_head_as_a_high_water_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    property_key = ControllerKey.generate()
    head = sign_head(property_key, "atlantic", "journal-1", (4_711, "ab" * 32), AT)
    other = sign_head(ControllerKey.generate(), "pacific", "journal-2", (12, "cd" * 32), AT)
    heads = tmp_path / "central.site-heads"
    write_site_heads(heads, {"atlantic": head, "pacific": other})
    out = tmp_path / "atlantic.mark"
    status, printed, _ = run(
        capsys, "site-head", "atlantic", "--heads", str(heads), "--out", str(out),
        "--db", str(tmp_path / "central.db"),
    )  # fmt: skip
    assert status == 0
    assert "row 4711" in printed
    mark = read_high_water(out)
    assert mark == head
    assert head_verifies(mark, [property_key.public_key])


def test_a_site_central_keeps_no_head_of_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    heads = tmp_path / "central.site-heads"
    head = sign_head(ControllerKey.generate(), "pacific", "journal-2", (12, "cd" * 32), AT)
    write_site_heads(heads, {"pacific": head})
    status, _, error = run(
        capsys, "site-head", "atlantic", "--heads", str(heads), "--out", str(tmp_path / "m"),
        "--db", str(tmp_path / "central.db"),
    )  # fmt: skip
    assert status != 0
    assert "central keeps no head of atlantic (it has: pacific)" in error
    assert not (tmp_path / "m").exists()
