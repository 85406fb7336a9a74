"""``python -m controller`` is ``jackpotd``."""

import sys

from controller.cli import main

sys.exit(main())
