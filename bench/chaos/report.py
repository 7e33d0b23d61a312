"""The verdict of a run: the figures, the table printed and the JSON written."""
import json
from pathlib import Path

from .verify import lost_granules

VERDICT = ("lost", "stuck", "duplicated_work", "corrupt_served", "discrepancies",
           "fault_checks_failed")
# What the run did, counted from its event log by how each line starts or what it holds.
DONE = {"kills": "kill -9 ", "broker restarts": "RabbitMQ restarted",
        "database restarts": "PostgreSQL restarted", "varies": "varied off and on",
        "repacks": "repack of ", "faulty drives": "now fail every write",
        "bytes flipped": "flipped a byte", "volumes truncated": "truncated volume",
        "tape target kills": "tgt killed -9",
        "cache squeezed": "cache squeezed", "S3 started late": "S3 server started ",
        "S3 kills": "S3 server killed -9", "S3 wrong keys": "S3 server ran with other keys",
        "buckets created": "bucket granary-", "objects deleted": "deleted object ",
        "objects changed": "changed a byte of object "}


def faults_done(events):
    return {name: sum(1 for _, line in events if mark in line) for name, mark in DONE.items()}


def judge(run, checked):
    """The figures from the tape check, the orders, the sampler and what is left unfinished."""
    originals = run.provider.originals
    granule_of = {o.name: o.granule_id for o in originals.values()}
    corrupt = [c for order in run.orders for c in order.corrupt]
    # an item the archive failed ("no readable copy") could not be read back: lost; one still
    # not served when its order gave up is stuck (its order's error counts below)
    failed = {granule_of[name] for order in run.orders for name, _ in order.failed_items}
    bad = {granule_of[c["name"]] for c in corrupt} | failed
    lost = lost_granules(checked, bad)
    stuck = sum(run.result["stuck_detail"].values()) + sum(
        1 for order in run.orders if order.error)
    s3_faults = run.objects.rows(lost, {granule_of[c["name"]] for c in corrupt})
    return {
        "granules": len(originals),
        "large": sum(1 for o in originals.values() if o.large),
        "big": sum(1 for o in originals.values() if o.big),
        "bytes": sum(o.size for o in originals.values()),
        "archived": sum(1 for state, _ in checked.values() if state == "archived"),
        "lost": len(lost),
        "lost_granules": lost[:100],
        "short_of_copies": sorted(g for g, (_, good) in checked.items() if good < 2)[:100],
        "stuck": stuck,
        "duplicated_work": len(run.sampler.seen),
        "duplicated_examples": [list(map(str, k)) for k in list(run.sampler.seen)[:20]],
        "duplicate_samples": run.sampler.samples,
        "corrupt_served": len(corrupt),
        "corrupt_downloads": corrupt[:20],
        "downloads": sum(len(order.downloaded) for order in run.orders),
        "orders": [order.summary() for order in run.orders],
        "server_errors_seen": sum(api.server_errors for api in run.apis.values()),
        "damaged_files": sorted(run.faults.damaged),
        "faults_done": faults_done(run.faults.events),
        "events": run.faults.events,
        "processes_exited": run.fleet.dead(),
        "s3_faults": s3_faults,
        "fault_checks_failed": sum(1 for row in s3_faults if not row["ok"]),
        "reason_samples": run.reasons.samples,
    }


def passed(result):
    """0 lost, stuck, duplicated, corrupt served, (once the archive reconciles) 0
    discrepancies, and every S3 fault showed its reason and passed its own check."""
    return all(not result.get(key) for key in VERDICT)


def fault_row(row):
    """One S3 fault: how long it lasted, the reason an operator read meanwhile, what it hit."""
    if row["expected_reason"]:
        seen = (f"reason after {row['seen_after_s']} s: \"{_short(row['reason'])}\""
                if row["reason"] else f"NO reason with \"{row['expected_reason']}\" seen")
    else:
        seen = row["detail"]
    return (f"{row['lasted_s']:.0f} s; {seen}; files {row['files']}, lost {row['lost']}, "
            f"corrupt served {row['corrupt_served']}; {'ok' if row['ok'] else 'FAILED'}")


def _short(reason, width=90):
    """The reason without the endpoint's address, cut to width."""
    reason = reason.replace("copy to the object store failed: ", "")
    return reason if len(reason) <= width else reason[:width - 3] + "..."


def table(result):
    def show(key, missing="n/a (no reconciliation on this branch)"):
        value = result.get(key)
        return missing if value is None else value

    rows = [("granules (large, big)",
             f"{result['granules']} ({result['large']}, {result.get('big', 0)})"),
            ("bytes made", f"{result['bytes'] / 2**20:.1f} MiB"),
            ("archived", result["archived"])]
    rows += [(key, show(key)) for key in VERDICT]
    rows += [("recovery_s", show("recovery_s", "never quiet")),
             ("repairs by reconciliation", show("repairs")),
             ("past end of data (a note)", result.get("past_end_of_data", "n/a")),
             ("downloads checked", result["downloads"]),
             ("granules short of 2 good copies", len(result["short_of_copies"])),
             ("5xx answers met (retried)", result["server_errors_seen"]),
             ("duplicate samples", result["duplicate_samples"]),
             ("faults", ", ".join(f"{k} {v}" for k, v in result["faults_done"].items()))]
    rows += [(f"S3: {row['fault']}", fault_row(row)) for row in result.get("s3_faults", [])]
    rows += [("run time", f"{result['run_s']:.0f} s"),
             ("verdict", "PASS" if passed(result) else "FAIL")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def write(result, path):
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str))
