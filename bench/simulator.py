"""simulator: the archive scheduler replaying the seeds' workloads in virtual time, smart
against the fifo baseline run on the same workload and seed."""
from pathlib import Path

from django.conf import settings

NAME = "simulator"
HELP = "nas26 and gsfc97 replayed by the smart scheduler and by fifo"


def add_arguments(parser):
    parser.add_argument("--workloads", default=str(settings.BASE_DIR.parent / "shared"
                                                   / "workloads"))
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--seed", type=int, default=1)


def run(options):
    from backend.archive import simulator

    runs = {}
    for name in ("nas26", "gsfc97"):
        path = Path(options["workloads"]) / f"{name}.json"
        if not path.is_file():
            raise FileNotFoundError(f"no workload {path}; pass --workloads DIR")
        workload = simulator.load_workload(path)
        for policy in ("smart", "fifo"):
            runs[f"{name}-{policy}"] = simulator.simulate(workload, policy, options["hours"],
                                                          options["seed"])
    nas, nas_fifo = runs["nas26-smart"], runs["nas26-fifo"]
    gsfc = runs["gsfc97-smart"]
    result = {
        "hours": options["hours"], "seed": options["seed"], "runs": runs,
        "nas26_ratio_to_bound": nas["ratio_to_bound"],
        "nas26_mounts_smart_over_fifo": round(nas["mounts"] / nas_fifo["mounts"], 3),
        "gsfc97_targets_met": gsfc.get("targets_met"),
        "gsfc97_write_utilisation": gsfc.get("write_utilisation"),
        "goals": {"nas26_ratio_to_bound": ">= 0.85", "nas26_mounts_smart_over_fifo": "<= 0.2",
                  "gsfc97_targets_met": "true", "gsfc97_write_utilisation": ">= 0.85"},
    }
    table = []
    for key, r in runs.items():
        lat = r["recall_latency_s"]
        table.append((key, f"{r['aggregate_mb_s']:7.2f} MB/s  {r['ratio_to_bound']:.3f} of bound"
                      f"  {r['mounts']:6d} mounts  recall p50/p95 {lat['p50']:.0f}/{lat['p95']:.0f}"
                      f" s"))
    table += [
        ("nas26 smart / bound (goal >= 0.85)", f"{result['nas26_ratio_to_bound']:.3f}"),
        ("nas26 mounts smart / fifo (goal <= 0.2)", f"{result['nas26_mounts_smart_over_fifo']}"),
        ("gsfc97 daily targets met", f"{result['gsfc97_targets_met']}"),
        ("gsfc97 write utilisation (goal >= 0.85)", f"{result['gsfc97_write_utilisation']}"),
    ]
    result["table"] = table
    return result
