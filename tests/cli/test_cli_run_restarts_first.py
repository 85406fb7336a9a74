"""``jackpotd run`` started by hand starts itself again before it imports the command line.

The service never runs from a bytecode cache, so ``jackpotd run`` started any other way than
the unit starts it replaces itself with an interpreter that reads none
(controller/security/bytecode.py). It does so before the parser is built: building it imports
every subcommand, the service with them, and the new process imports them all again from
source; done first, the first process imports almost nothing (docs/benchmarks.md, "Where
start-up's time goes"). ``-X importtime`` is not passed on to the new process (it is started
isolated, with the service's options only), so its log is the first process's alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("controller.service", "controller.journal", "controller.web", "controller.runtime")


def test_run_started_by_hand_restarts_before_importing_the_service(tmp_path: Path) -> None:
    missing = tmp_path / "absent.toml"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "controller", "run", "--config", str(missing)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    logged = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[-1].strip() for line in logged}
    assert "controller.security.bytecode" in imported
    assert {name for name in imported if name.startswith(HEAVY)} == set()
    assert "controller.cli.run" not in imported
    # The restarted process said what is wrong, in its own one line.
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert (done.returncode, said) == (
        1,
        [f"jackpotd: {missing}: (file): cannot read: No such file or directory"],
    )


def test_a_command_given_its_words_in_process_is_not_restarted(tmp_path: Path) -> None:
    # controller.cli.main(argv) from another program (the benchmarks ready a site so) parses
    # those words; only the words of the process's own command line restart it early.
    script = (
        "import sys\nfrom controller.cli import main\nsys.exit(main(['--debug', 'paytables']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "run"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "progressive-1" in done.stdout


def test_the_service_parses_its_words_without_importing_the_other_commands() -> None:
    # The restarted service compiles every module it imports from source: it builds a parser
    # of its own command alone (the approval's check and the command each build one).
    script = (
        "import sys\n"
        "from controller.cli import build_parser\n"
        "args = build_parser(service_only=True).parse_args(['run', '--config', 'x.toml'])\n"
        "import controller.cli.launch\n"
        "print(args.config, args.log_level)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('controller.cli.', 'rich'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    parsed, imported = done.stdout.splitlines()
    assert parsed == "x.toml INFO"
    assert imported == str(
        [
            "controller.cli.common",
            "controller.cli.launch",
            "controller.cli.listen",
            "controller.cli.run",
        ]
    )


def test_the_services_help_is_its_own() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: jackpotd run [-h] --config CONFIG")
