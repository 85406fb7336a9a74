"""The demo's embedded configuration: simulated tables, one progressive pool, SQLite, localhost.

Signs, when asked for, are emulated Alpha LED signs on ptys (``url = "emulator://<name>"``,
docs/signs.md) driven by the real sign driver.

With ``levels``, one more table plays the demo's four-level progressive
(``demo_paytables/demo-levels-1.toml``, filed in ``controller.paytable_dirs`` as an operator
files a house paytable): a grand that is a mystery level (must hit by $12,000), a major, a
minor and a mini, each a card on the display, and a sign over the table showing the grand's
meter and its "must hit by".

``jackpotd demo`` (and ``make demo``) runs the whole controller on it: the same code as a
production service, with the tables simulated in-process instead of reached over MQTT or
serial lines.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.config.approval import Approver
from controller.config.load import Config, parse_config
from controller.journal import location
from controller.ledger.levels import level_pool_id
from controller.security.keys import generate, open_key, seal, write_key_file

if TYPE_CHECKING:
    from controller.journal.location import JournalLocation

TEMPLATE = """
[controller]
site = "demo"
id = "demo"
journal = "{journal}"
operator_socket = "{socket}"
verification_amount = "$1,000"
heartbeat_timeout_s = 10

{paytable_dirs}
[[pools]]
id = "fortune-progressive"
paytable = "progressive-1"

[web]
host = "{host}"
port = {port}

[simulator]
seed = {seed}
round_interval_s = {interval}
hit_every = {hit_every}
{rounds}"""

TABLE = """
[[tables]]
id = "T{number}"
transport = "simulator"
bonus = "fortune-1"
{ace_high}progressive = "progressive-1"
pool = "fortune-progressive"
"""


SIGN = """
[[alpha_sign]]
name = "{name}"
url = "emulator://{name}"
pool_id = "{pool}"
tables = [{tables}]
baudrate = 9600
bytesize = 8
parity = "N"
min_interval_s = 0.25
jackpot_hold_s = 4.0
"""


LEVELS_POOL = "demo-levels"
"""The levels demo's pool: its levels are ``demo-levels.grand`` to ``demo-levels.mini``."""

LEVELS = """
[[pools]]
id = "{pool}"
paytable = "demo-levels-1"

[[tables]]
id = "T{number}"
transport = "simulator"
bonus = "fortune-1"
progressive = "demo-levels-1"
pool = "{pool}"
"""

SIGNED_LEVEL = "grand"
"""The level the levels table's sign shows: the mystery one, with its "must hit by"."""

DEMO_PAYTABLES: Final = Path(__file__).parent / "demo_paytables"
"""The demo's house paytables (shipped inside the package, beside this module)."""


def _toml_text(text: str) -> str:
    """``text`` inside a TOML basic string's quotes."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def demo_config(  # noqa: PLR0913 - the demo's knobs, all keyword arguments
    *,
    tables: int = 3,
    signs: tuple[str, ...] = (),
    journal: JournalLocation = Path("var/demo.db"),
    host: str = "127.0.0.1",
    port: int = 8080,
    seed: int = 1,
    interval_s: float = 0.5,
    hit_every: int = 0,
    rounds: int | None = None,
    levels: bool = False,
) -> Config:
    """The demo configuration with ``tables`` simulated tables (every third offers Ace High).

    ``signs`` names emulated signs over every table; ``rounds`` ends the simulation; ``levels``
    adds a table on the four-level pool, and a sign over it when ``signs`` names any.
    """
    dirs = f'paytable_dirs = ["{_toml_text(str(DEMO_PAYTABLES))}"]\n' if levels else ""
    text = TEMPLATE.format(
        paytable_dirs=dirs,
        journal=_toml_text(location.text(journal)),
        socket=_toml_text(str(demo_operator_socket(journal))),
        host=host,
        port=port,
        seed=seed,
        interval=interval_s,
        hit_every=hit_every,
        rounds="" if rounds is None else f"rounds = {rounds}\n",
    )
    for number in range(1, tables + 1):
        ace_high = 'ace_high = "ace-high-1"\n' if number % 3 == 0 else ""
        text += TABLE.format(number=number, ace_high=ace_high)
    ids = ", ".join(f'"T{number}"' for number in range(1, tables + 1))
    for name in signs:
        text += SIGN.format(name=name, pool="fortune-progressive", tables=ids)
    if levels:
        text += LEVELS.format(pool=LEVELS_POOL, number=tables + 1)
        for name in signs[:1]:
            pool = level_pool_id(LEVELS_POOL, SIGNED_LEVEL)
            text += SIGN.format(name=f"{name}-grand", pool=pool, tables=f'"T{tables + 1}"')
    return parse_config(text, "<demo configuration>", Path.cwd())


def demo_operator_socket(journal: JournalLocation) -> Path:
    """The demo's operator socket, through which the console and the commands sign.

    In the temporary folder, named after the journal (so two demos of two journals do not
    meet): a socket's path is short by law (108 bytes), and a journal's folder may be deep.
    """
    where = location.text(journal)
    if (file := location.sqlite_file(journal)) is not None:
        where = str(file.resolve())
    digest = hashlib.sha256(where.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"jackpotd-demo-{digest}.sock"


DEMO_MANAGER = "demo-manager"
DEMO_PASSPHRASE = "demo only, never for real money"  # noqa: S105 - the demo's, on purpose
"""The demo manager's passphrase: the demo plays with money nobody owns, so it is no secret."""


def demo_manager_key(journal: JournalLocation) -> Path:
    """The demo manager's key file: beside a journal file, else ``var/<database>.manager.key``."""
    return (location.folder(journal) or Path("var")) / f"{location.name(journal)}.manager.key"


def demo_approver(journal: JournalLocation) -> Approver:
    """The demo's manager, whose key file sits beside the demo's journal (made at first use).

    It enrolls itself on a new journal and approves the demo's configuration at each start:
    the one place where the controller signs by itself (docs/security.md). A PostgreSQL
    journal has no folder: its manager's key is ``var/<database>.manager.key``.
    """
    path = demo_manager_key(journal)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_key_file(path, seal(generate(), DEMO_MANAGER, DEMO_PASSPHRASE, n=2**14))
    name, key = open_key(path, DEMO_PASSPHRASE)
    return Approver(name, key)
