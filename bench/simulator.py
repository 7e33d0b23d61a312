"""simulator: the archive scheduler replaying the workloads in virtual time, smart against the
fifo baseline run on the same workload and seed. lto9 runs fewer virtual hours than the others
by default: its queue of recalls grows to tens of thousands and each decision reads it whole."""
from pathlib import Path

from django.conf import settings

NAME = "simulator"
HELP = "nas26, gsfc97 and lto9 replayed by the smart scheduler and by fifo"


def add_arguments(parser):
    parser.add_argument("--workloads", default=str(settings.BASE_DIR.parent / "shared"
                                                   / "workloads"))
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--lto9-hours", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)


def run(options):
    from backend.archive import simulator

    runs = {}
    for name in ("nas26", "gsfc97", "lto9"):
        path = Path(options["workloads"]) / f"{name}.json"
        if not path.is_file():
            raise FileNotFoundError(f"no workload {path}; pass --workloads DIR")
        workload = simulator.load_workload(path)
        hours = options["lto9_hours"] if name == "lto9" else options["hours"]
        for policy in ("smart", "fifo"):
            runs[f"{name}-{policy}"] = simulator.simulate(workload, policy, hours,
                                                          options["seed"])
    nas, nas_fifo = runs["nas26-smart"], runs["nas26-fifo"]
    gsfc, lto9 = runs["gsfc97-smart"], runs["lto9-smart"]
    result = {
        "hours": options["hours"], "lto9_hours": options["lto9_hours"], "seed": options["seed"],
        "runs": runs,
        "nas26_ratio_to_bound": nas["ratio_to_bound"],
        "nas26_mounts_smart_over_fifo": round(nas["mounts"] / nas_fifo["mounts"], 3),
        "gsfc97_targets_met": gsfc.get("targets_met"),
        "gsfc97_write_utilisation": gsfc.get("write_utilisation"),
        "lto9_targets_met": lto9.get("targets_met"),
        "lto9_utilisation_of_allowed": lto9["utilisation"]["of_allowed"],
        "goals": {"nas26_ratio_to_bound": ">= 0.85", "nas26_mounts_smart_over_fifo": "<= 0.2",
                  "gsfc97_targets_met": "true", "gsfc97_write_utilisation": ">= 0.85",
                  "lto9_targets_met": "true", "lto9_utilisation_of_allowed": ">= 0.85"},
    }
    table = []
    for key, r in runs.items():
        lat, use = r["recall_latency_s"], r["utilisation"]
        table.append((key, f"{r['aggregate_mb_s']:7.1f} MB/s {r['ratio_to_bound']:.3f} of bound"
                      f" {r['mounts']:5d} mounts {r['mounts_per_tb']:8.2f}/TB"
                      f"  use {use['measured']:.3f}/{use['allowed']:.3f} allowed"
                      f" ({use['of_allowed']:.2f})"
                      f"  recall p50/p95 {lat['p50']:.0f}/{lat['p95']:.0f} s"
                      f" ({r['recalls_waiting']['count']} waiting)"))
        if "targets" in r:
            t = r["targets"]
            table.append((f"{key} daily volumes", f"ingest written {_tb(t['ingest_written_bytes'])}"
                          f" of {_tb(t['ingest_target_bytes'])} TB,"
                          f" served {_tb(t['distribution_served_bytes'])}"
                          f" of {_tb(t['distribution_target_bytes'])} TB"
                          f" (recalled {_tb(r['bytes_read'])} of"
                          f" {_tb(r['bytes_offered']['read'])} TB offered)"))
    table += [
        ("nas26 smart / bound (goal >= 0.85)", f"{result['nas26_ratio_to_bound']:.3f}"),
        ("nas26 mounts smart / fifo (goal <= 0.2)", f"{result['nas26_mounts_smart_over_fifo']}"),
        ("gsfc97 daily targets met", f"{result['gsfc97_targets_met']}"),
        ("gsfc97 write utilisation (goal >= 0.85)", f"{result['gsfc97_write_utilisation']}"),
        ("lto9 daily targets met", f"{result['lto9_targets_met']}"),
        ("lto9 utilisation of allowed (goal >= 0.85)",
         f"{result['lto9_utilisation_of_allowed']}"),
    ]
    result["table"] = table
    return result


def _tb(nbytes):
    return f"{nbytes / 1e12:.2f}"
