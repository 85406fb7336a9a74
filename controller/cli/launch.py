"""``jackpotd run`` as the unit starts it: the import path checked before any ``.pth`` code runs.

``controller/__main__.py`` set the service's import path without running a line of any ``.pth``
file, and hashed its manifest before a dependency was imported (docs/security.md section 2.4).
Here, where the configuration and the journal can be read, that manifest is compared with the
approved one; only if nothing differs do the import lines of the install folders' ``.pth``
files run, as they were read and hashed then (never read again). Otherwise none of them runs,
and ``jackpotd run`` refuses as ever: each difference named and journaled as a fault, by the
same self-check (controller/service/wiring.py), which is handed the same manifest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from controller.cli import build_parser, main
from controller.config.load import load_config
from controller.ledger_journal import open_reader
from controller.security.import_path import run_import_lines

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.security.import_path import ImportPath
    from controller.security.manifest import Manifest


def matches_approval(argv: Sequence[str], manifest: Manifest) -> bool:
    """Whether ``manifest`` is the one approved in the journal of ``run``'s configuration."""
    args = build_parser(service_only=True).parse_args(argv)
    try:
        config = load_config(args.config)
        with open_reader(config.controller.journal) as journal:
            approved = journal.state.manifest
    except Exception:  # noqa: BLE001 - whatever fails here, run says it in its own words
        return False
    checked = replace(manifest, configuration=config.digest)
    return approved is not None and not checked.differences(approved)


def serve_checked(argv: Sequence[str], path: ImportPath, manifest: Manifest) -> int:
    """Run ``jackpotd run``, with the ``.pth`` import lines run first if all is approved."""
    if matches_approval(argv, manifest):
        run_import_lines(path)
    return main(argv)
