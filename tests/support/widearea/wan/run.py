"""The WAN test's full form: ``python -m support.widearea.wan.run [--cuts N]`` (``make wan``).

The seed chooses each cut (how, which properties, short or past the grace, every third during
a hit) of a session (:mod:`support.widearea.wan.session`); once drained and checked, the figures go
to ``bench/results/wan.json``, and it exits 1 if anything is wrong.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import TYPE_CHECKING, Any, Final

from controller.journal.identity import SEQUENCE_REUSED
from support.widearea.wan.lab import ROOT
from support.widearea.wan.session import HIT_EVERY, ROUND_PAUSE_S, SHORT_S, CutPlan, wan_session

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

    from support.ha.tcp_proxy import Cut
    from support.widearea.wan.checks import SiteFindings
    from support.widearea.wan.session import During, WanSession

RESULTS: Final = ROOT / "bench" / "results" / "wan.json"


def planned(rng: random.Random, count: int, sites: Sequence[str], grace_s: float) -> list[CutPlan]:
    """The full form's cuts, as the seed chooses them: every third during a hit."""
    targets = [(site,) for site in sites] + [tuple(sites)]
    plans = []
    for n in range(count):
        how: Cut = rng.choice(("stall", "reset"))
        hold = rng.choice((SHORT_S, grace_s + rng.uniform(1.0, 4.0)))
        during: During = ("hit-lock", "hit-claim")[(n // 3) % 2] if n % 3 == 0 else ""
        plans.append(CutPlan(rng.choice(targets), how, round(hold, 1), during))
    return plans


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def summary(session: WanSession, found: Sequence[SiteFindings], seed: int) -> dict[str, Any]:
    """The figures of bench/results/wan.json."""
    cuts = session.cuts
    settings = session.lab.settings

    def worst(name: str) -> float | None:
        values = [v for f in found if (v := getattr(f, name)) is not None]
        return _rounded(max(values, default=None))

    def total(name: str) -> int:
        return int(sum(getattr(f, name) for f in found))

    timed = [c for c in cuts if not c.clock_step_s]
    closed = [s for c in timed for s in c.closed_after_s.values() if s is not None]
    reopened = [s for c in timed for s in c.reopened_after_s.values() if s is not None]
    return {
        "benchmark": "wan",
        "seed": seed,
        "sites": len(found),
        "tables_per_site": {"wide_area": settings.tables, "local": 1},
        "timing": {
            "grace_s": settings.grace_s, "heartbeat_s": settings.heartbeat_s,
            "round_pause_s": ROUND_PAUSE_S, "hit_every": HIT_EVERY,
        },
        "cuts": len(cuts),
        "cuts_by_kind": {how: sum(c.how == how for c in cuts) for how in ("stall", "reset")},
        "cuts_during_hit": sum(bool(c.during) for c in cuts),
        "cuts_past_grace": sum(c.hold_s > settings.grace_s for c in cuts),
        "rounds": sum(session.rounds.values()),
        "messages": total("messages"),
        "contributions": total("contributions"),
        "hits_claimed": total("claims"),
        "hits_claimed_during_cuts": sum(len(c.claims) for c in cuts),
        "contributions_lost": total("contributions_lost") + total("claims_lost"),
        "contributions_applied_twice": total("contributions_applied_twice"),
        "wide_area_hits_awarded_twice": total("wide_area_hits_awarded_twice"),
        "hits_unpaid": total("hits_unpaid"),
        "wagers_while_closed": total("wagers_while_closed"),
        "wagers_past_grace": total("wagers_past_grace"),
        "reopened_before_reconciled": total("reopened_before_reconciled"),
        "wagers_before_reconciled": total("wagers_before_reconciled"),
        "wagers_refused_while_closed": total("refused_while_closed"),
        "local_wagers_during_cuts": total("local_wagers_during_cuts"),
        "reconciled": all(f.reconciled for f in found),
        "reconciliations": total("reconciliations"),
        "gate_closings": total("gate_closings"),
        "gate_closings_shown_on_signs": total("closings_shown"),
        "gate_closings_not_shown": total("closings_not_shown"),
        "gate_closed_after_s_max": _rounded(max(closed, default=None)),
        "gate_reopened_after_heal_s_max": _rounded(max(reopened, default=None)),
        "worst_meter_lag_s": worst("worst_meter_lag_s"),
        "worst_meter_lag_uncut_s": worst("worst_meter_lag_uncut_s"),
        "worst_ack_lag_s": worst("worst_ack_lag_s"),
        "worst_ack_lag_uncut_s": worst("worst_ack_lag_uncut_s"),
        "lag_uncut_p50_s": {
            f.site: {
                "ack": _rounded(f.ack_lag_uncut_p50_s),
                "meter": _rounded(f.meter_lag_uncut_p50_s),
            }
            for f in found
        },
        "clock_steps": [{"at": when, "s": round(step, 3)} for when, step in session.steps],
        "central_faults": dict(session.central.faults),
        "central_ids_reused": session.central.faults[SEQUENCE_REUSED],
        "problems": {f.site: f.problems for f in found if f.problems}
        | ({"central": central} if (central := session.central_problems()) else {}),
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    started = time.monotonic()
    with wan_session(args.seed) as session:
        sites = list(session.properties)
        plans = planned(session.rng, args.cuts, sites, session.lab.settings.grace_s)
        for n, plan in enumerate(plans, 1):
            session.play_for(session.rng.uniform(1.0, 3.0))
            record = session.cut(plan)
            sys.stdout.write(
                f"cut {n}: {'+'.join(record.sites)} {record.how} {record.hold_s} s "
                f"{record.during or ''} claims {record.claims} {record.caught} "
                f"closed {record.closed_after_s} reopened {record.reopened_after_s}\n"
            )
            sys.stdout.flush()
        session.drain()
        found = session.findings()
        document = {
            **summary(session, found, args.seed),
            "runs": 1,
            "cuts_detail": [dataclasses.asdict(c) for c in session.cuts],
            "sites_detail": [dataclasses.asdict(f) for f in found],
            "wall_s": round(time.monotonic() - started, 1),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(document, indent=2) + "\n")
    sys.stdout.write(f"results in {RESULTS}\n")
    if any(not f.passed for f in found) or session.central_problems():
        sys.exit(1)


if __name__ == "__main__":
    main()
