"""Where an ingest phase of `bench mixed` spends its time: a sampler thread that notes, every
`interval` seconds, each process group's CPU time and run-queue wait (/proc/<pid>/task/*/
schedstat: time runnable but not running, which is what a lower nice level costs), the whole
machine's busy CPU (/proc/stat: other people's work shows as busy CPU that is none of ours),
and with `states` the ingest pipeline's granules by way in and state; and the provider's calls
(each HTTP call's start and duration). The same sampling runs in both phases, so what it costs
weighs on both alike."""
import os
import threading
import time

from . import live


def _schedstat(pid):
    """(on-CPU ns, run-queue wait ns) of a process, summed over its threads."""
    run = wait = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                fields = f.read().split()
        except OSError:
            continue
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run, wait


def _machine_busy():
    """Busy CPU seconds of the whole machine so far (every process of every user)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _database_pids():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                       " AND pid <> pg_backend_pid()")
        return [pid for (pid,) in cursor.fetchall()]


def _pipeline(first_request):
    """{way/state: granules} of the requests after `first_request`, and archive work by state."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT r.way, g.state, count(*) FROM ingest_ingestgranule g JOIN "
                       "ingest_ingestrequest r ON r.id = g.request_id WHERE r.id > %s "
                       "GROUP BY 1, 2", [first_request])
        out = {f"{way}/{state}": n for way, state, n in cursor.fetchall()}
    return out


class Timeline:
    """Samples in a thread from start() to stop(); `groups` is {name: root pid}."""

    def __init__(self, groups, interval=0.1, states=False):
        self.groups, self.interval, self.states = groups, interval, states
        self.samples, self.calls = [], []
        self.first_request = 0
        self._stop = threading.Event()
        self._thread = None
        self.t0 = None
        self.database = {}     # backend pid: (run ns, wait ns), last seen

    def start(self):
        from django.db import connection

        from ingest.models import IngestRequest

        self.postgres = connection.vendor == "postgresql"
        self.states = self.states and self.postgres
        self.first_request = IngestRequest.objects.order_by("-pk").values_list(
            "pk", flat=True).first() or 0
        self.t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="mixed-timeline", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.summary()

    def call(self, web, method, path, *args, **kwargs):
        """web.call, its start and duration noted."""
        started = time.perf_counter()
        try:
            return web.call(method, path, *args, **kwargs)
        finally:
            self.calls.append((round(started - self.t0, 3),
                               round(time.perf_counter() - started, 4), method,
                               path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
                               if method == "GET" else path.split("?")[0]))

    def _run(self):
        from django.db import connection

        try:
            while not self._stop.is_set():
                self.samples.append(self._sample())
                self._stop.wait(self.interval)
            self.samples.append(self._sample())
        finally:
            connection.close()

    def _sample(self):
        row = {"t": round(time.perf_counter() - self.t0, 3), "machine": _machine_busy(),
               "load": os.getloadavg()[0]}
        for name, pid in self.groups.items():
            stats = [_schedstat(p) for p in live._tree(pid)]
            row[name] = (sum(s[0] for s in stats), sum(s[1] for s in stats))
        if self.postgres:
            for pid in _database_pids():
                self.database[pid] = _schedstat(pid)
            row["database"] = (sum(s[0] for s in self.database.values()),
                               sum(s[1] for s in self.database.values()))
        if self.states:
            row["pipeline"] = _pipeline(self.first_request)
        return row

    def summary(self):
        """CPU and run-queue wait (s) of each group over the phase, the machine's other busy
        CPU, the pipeline's milestones and the provider's calls by kind."""
        first, last = self.samples[0], self.samples[-1]
        wall = last["t"] - first["t"]
        groups = [k for k in first if isinstance(first[k], tuple)]
        out = {"wall_s": round(wall, 2), "samples": len(self.samples),
               "load_start_end": [first["load"], last["load"]],
               "cpu_s": {g: round((last[g][0] - first[g][0]) / 1e9, 2) for g in groups},
               "runq_wait_s": {g: round((last[g][1] - first[g][1]) / 1e9, 2) for g in groups},
               "machine_busy_s": round(last["machine"] - first["machine"], 2)}
        ours = sum(out["cpu_s"].values())
        out["others_busy_s"] = round(out["machine_busy_s"] - ours, 2)
        out["milestones_s"] = self.milestones()
        out["calls"] = self.call_kinds()
        return out

    def milestones(self):
        """When each way's granules were first seen in each state, and when all of them were
        archived (s from the start)."""
        seen = {}
        for row in self.samples:
            pipeline = row.get("pipeline") or {}
            for key, n in pipeline.items():
                if n:
                    seen.setdefault(f"{key} first", row["t"])
            for way in {k.split("/")[0] for k in pipeline}:
                total = sum(n for k, n in pipeline.items() if k.startswith(f"{way}/"))
                if total and pipeline.get(f"{way}/archived") == total:
                    seen.setdefault(f"{way}/archived all", row["t"])
        return dict(sorted(seen.items(), key=lambda kv: kv[1]))

    def call_kinds(self):
        """Per kind of provider call: how many, their total and largest duration (s), and the
        first and last start."""
        out = {}
        for started, took, method, kind in self.calls:
            row = out.setdefault(f"{method} {kind}", {"n": 0, "total_s": 0.0, "max_s": 0.0,
                                                      "first_s": started, "last_s": started})
            row["n"] += 1
            row["total_s"] = round(row["total_s"] + took, 3)
            row["max_s"] = max(row["max_s"], took)
            row["last_s"] = started
        return out

    def series(self, step=0.5):
        """The samples thinned to one per `step` seconds, CPU and wait as per-interval
        seconds: for reading the phase step by step."""
        out, previous = [], None
        for row in self.samples:
            if previous is not None and row["t"] - previous["t"] < step and row is not \
                    self.samples[-1]:
                continue
            if previous is not None:
                span = row["t"] - previous["t"]
                entry = {"t": row["t"], "load": row["load"],
                         "machine_cores": round((row["machine"] - previous["machine"]) / span,
                                                2)}
                for k, v in row.items():
                    if isinstance(v, tuple):
                        entry[k] = [round((v[0] - previous[k][0]) / 1e9 / span, 2),
                                    round((v[1] - previous[k][1]) / 1e9 / span, 2)]
                entry["pipeline"] = row.get("pipeline")
                out.append(entry)
            previous = row
        return out
