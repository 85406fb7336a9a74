"""``jackpotd_build_info``: what runs, as the labels of a gauge at 1 (docs/metrics.md).

The version, the interpreter, and the software digest a manager approved (its first 12 hex
digits, as the self-check's messages shorten it): start-up refuses to run anything else
(docs/operations.md, "Approving the software"), so it names what runs without the cost of
digesting every installed file again. Empty while no manifest is approved (the demo, tests).
The source revision it was built from (:mod:`controller.runtime.revision`) names the code in
the project's history; ``unknown`` when nothing says.
"""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING, Final

from prometheus_client.core import GaugeMetricFamily

from controller import __version__
from controller.runtime.revision import revision

if TYPE_CHECKING:
    from controller.security.manifest import ApprovedManifest

SHORT_DIGEST: Final = 12


def build_info(manifest: ApprovedManifest | None) -> GaugeMetricFamily:
    """The family, for the software approved when the controller started."""
    family = GaugeMetricFamily(
        "jackpotd_build_info",
        "The running controller: its version, source revision, interpreter and approved "
        "software digest.",
        labels=["version", "revision", "python", "software"],
    )
    python = f"{platform.python_implementation()} {platform.python_version()}"
    software = manifest.software[:SHORT_DIGEST] if manifest is not None else ""
    family.add_metric([__version__, revision(), python, software], 1.0)
    return family
