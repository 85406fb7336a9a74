"""docs/operations.md, "The reports as a PDF": the PDF as written, rendered and read back.

On the first three days of tests/support/cli/month_of_play.py's month, the section's command runs as
written; poppler renders every page to PNG (``pdftoppm``) and reads its text (``pdftotext``),
and each figure the JSON of ``report meters`` and ``report returns`` gives for the same period
is in it, with the journal head it was made from (in the text and the PDF's subject).
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import pytest
from support.cli.month_of_play import documented, run_line

from controller.money import format_cents

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

SECTION = "### The reports as a PDF"


def _poppler(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def test_the_pdf_holds_the_reports_figures_and_renders(days: Path, tmp_path: Path) -> None:
    (line,) = documented(SECTION)
    result = run_line(line, tmp_path, days)
    assert result.returncode == 0, result.stderr
    pdf = tmp_path / "report-2026-11.pdf"
    info = _poppler("pdfinfo", str(pdf))
    pages = int(next(row.split()[-1] for row in info.splitlines() if row.startswith("Pages:")))
    assert pages == 3  # the text, the pool's meter, the returns
    assert f"wrote {pdf.name}: {pages} pages" in result.stdout
    _poppler("pdftoppm", "-png", "-r", "40", str(pdf), str(tmp_path / "page"))
    rendered = sorted(tmp_path.glob("page-*.png"))
    assert len(rendered) == pages
    assert all(image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for image in rendered)

    period = "--from 2026-11-01 --to 2026-11-30 --json"
    meters = json.loads(run_line(f"jackpotd report meters {period}", tmp_path, days).stdout)
    returns = json.loads(run_line(f"jackpotd report returns {period}", tmp_path, days).stdout)
    head = meters["journal_head"]
    assert f"row {head['seq']} hash {head['hash']}" in info
    text = _poppler("pdftotext", "-layout", str(pdf), "-")
    assert f"row {head['seq']}, hash {head['hash']}" in text
    for pool in meters["pools"]:
        assert format_cents(pool["won_cents"]) in text
        assert format_cents(pool["wagered_cents"]) in text
        for hit in pool["last_hits"]:
            assert format_cents(hit["paid_cents"]) in text
    for group in returns["groups"]:
        for key in ("actual_percent", "theoretical_percent", "deviation_percent"):
            assert group[key] in text, (key, group[key])
        assert group["verdict"] in text
        assert format_cents(group["paid_back_cents"]) in text
