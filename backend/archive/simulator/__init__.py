"""A discrete-event simulator of the tape tier, driven by the scheduler.

It replays a workload (the shared `workloads/nas26.json`, `gsfc97.json` or `lto9.json`) on a
virtual clock,
against the smart policy or the FIFO baseline, so a policy is judged by mounts, drive time,
bytes per mount and recall latency (Phobos's measures) before it runs on real drives. Nothing
moves but numbers: silos with a robot that does one cartridge exchange at a time, drives with
their model's rate, mount, unmount and locate times, data paths shared by the transferring
drives, and a RAID cache of the workload's size. Every choice of what to mount, serve or
dismount is the scheduler's. The same seed gives the same result.

Modelling choices the workloads leave open, and what this module assumes:
- Sizes are decimal (1 MB = 1e6 bytes, 1 TB = 1e12), as in the workloads' references.
- nas26: each file has a primary and a backup copy (the seed timed archiving both), in volume
  groups per user type, the primary in the first silo and the backup in the second. Each user
  alternates puts and gets of its job, back to back. A put moves the files into the cache one
  by one (ftp: a turnaround per file, then the client's rate); a get recalls all its files at
  once (a wildcard get) and copies them out once all are in. Gets read job sets archived
  before the run (four per user), laid out contiguously per user as NAStore did.
- gsfc97: a steady ingest stream paced at the daily rate, granules lognormal (median, p95),
  both copies in one primary and one backup group. Distribution orders of a few consecutive
  granules of one product (a time range), paced at the daily rate; a share comes from the
  cache, the rest is recalled from an archive of 60 days of earlier ingest, the age of the
  data ordered exponential (most of it recent, a tail of old).
- lto9: gsfc97's load at 100x on a silo pair, each copy in its own silo. The cartridges
  holding data (`volumes_with_data`) are shared by the copies; a recall, uniform over five
  years of data whose cartridges fill over years, is uniform over cartridge and position, its
  backup at the same position of the paired cartridge in the other silo. The operator keeps
  per silo the write drives the ingest needs, and lets recalls gather for up to 2 h.
- Each silo has one robot, busy `robot_exchange_s` (10 s unless the workload says) per mount;
  the workloads' mount times include it. Locate time is `position_s_per_gb` per GB of
  distance, both ways.
- `utilisation` compares the bytes moved at the drive's rate with the bound the offered load
  allows (bound.py).
- The cache holds dirty files until every copy is written and recalled files until their job
  or order is done; clean files are purged at once. Recalls wait while it is 90 % full.
- A dismount rewinds (locate time back to the start), then unloads.
"""
from .engine import CACHE_FULL, POLL_S, SCRATCH_SPARE, Simulator, simulate
from .loads import (
    GSFC97_COLLECTIONS,
    GSFC97_HISTORY_DAYS,
    GSFC97_ORDER_GRANULES,
    GSFC97_RECALL_AGE_DAYS,
    NAS26_CLIENT_RATE,
    NAS26_FILE_S,
    NAS26_JOB_SETS,
    Z95,
    Gsfc97Load,
    Lto9Load,
    Nas26Load,
)
from .workload import GB, MB, TB, Hardware, load_workload

__all__ = [
    "CACHE_FULL", "GB", "GSFC97_COLLECTIONS", "GSFC97_HISTORY_DAYS", "GSFC97_ORDER_GRANULES",
    "GSFC97_RECALL_AGE_DAYS", "MB", "NAS26_CLIENT_RATE", "NAS26_FILE_S", "NAS26_JOB_SETS",
    "POLL_S", "SCRATCH_SPARE", "TB", "Z95", "Gsfc97Load", "Hardware", "Lto9Load", "Nas26Load",
    "Simulator", "load_workload", "simulate",
]
