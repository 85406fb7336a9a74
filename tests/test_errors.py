"""One exception root: every error class the controller and its drivers define is a JackpotError.

The command line catches :class:`controller.errors.JackpotError` and nothing else, so an error
class outside the root would reach an operator as a traceback. The walk imports every module
of both packages and checks each exception class defined there, so a new one cannot be missed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import controller
import drivers
from controller.config.load import ConfigError, load_config
from controller.errors import (
    ConfigurationError,
    InputError,
    JackpotError,
    RefusedError,
    UnavailableError,
)
from controller.journal import JournalError, SchemaError
from controller.ledger.apply import LedgerError
from controller.ports import ControllerUnavailableError
from controller.rules.cards import CardError
from drivers.mqtt.json_objects import PayloadError
from drivers.serial.protocol import ProtocolError

ROOT = Path(__file__).resolve().parent.parent


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in (controller, drivers):
        for module_info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if module_info.name.endswith("__main__"):
                continue  # running it is the command line itself
            module = importlib.import_module(module_info.name)
            for name, value in vars(module).items():
                if (
                    inspect.isclass(value)
                    and issubclass(value, BaseException)
                    and value.__module__ == module.__name__
                ):
                    found[f"{module.__name__}.{name}"] = value
    return found


def test_every_error_class_of_the_package_is_a_jackpot_error() -> None:
    classes = _error_classes()
    assert len(classes) >= 30, sorted(classes)  # the walk did reach the modules
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, JackpotError))
    assert outside == []


@pytest.mark.parametrize(
    ("error", "family", "builtin"),
    [
        (LedgerError, RefusedError, ValueError),
        (CardError, InputError, ValueError),
        (PayloadError, InputError, ValueError),
        (ProtocolError, InputError, ValueError),
        (SchemaError, JournalError, RuntimeError),
        (ControllerUnavailableError, UnavailableError, RuntimeError),
        (ConfigError, ConfigurationError, ValueError),
    ],
)
def test_errors_keep_the_builtin_bases_code_already_catches(
    error: type[Exception], family: type[JackpotError], builtin: type[Exception]
) -> None:
    # Code written before the root catches ValueError or RuntimeError; it must still see them.
    assert issubclass(error, family)
    assert issubclass(error, builtin)


def test_a_translated_error_chains_its_cause(tmp_path: Path) -> None:
    # A configuration that is not TOML: the ConfigError names file, key and reason, and keeps
    # msgspec's own error as its cause for whoever reads the traceback.
    broken = tmp_path / "jackpotd.toml"
    broken.write_text("[controller\n")
    with pytest.raises(ConfigError) as raised:
        load_config(broken)
    assert isinstance(raised.value, JackpotError)
    assert isinstance(raised.value.__cause__, msgspec.DecodeError)


def test_the_command_line_reports_any_jackpot_error_as_one_line_with_status_1(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "events.jsonl"
    broken.write_text('{"kind": "no-such-event"}\n')
    database = tmp_path / "journal.db"
    done = subprocess.run(
        [sys.executable, "-m", "controller", "apply", str(broken), "--db", str(database)],
        capture_output=True, text=True, timeout=60, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("jackpotd: ")
