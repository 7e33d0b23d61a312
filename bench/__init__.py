"""Benchmarks: each measures Granary against a baseline taken in the same run on the same disk.

A benchmark module has NAME, HELP, add_arguments(parser) and run(options) -> dict; the result
dict has a "table" list of (metric, value) rows that the command prints, and everything else
goes to the JSON file.
"""
from . import (
    archive_write,
    dashboard,
    download,
    events,
    ingest_large,
    ingest_small,
    mixed,
    object_store,
    search,
    simulator,
    stage,
    subscriptions,
    subset,
    tape,
)

BENCHMARKS = {m.NAME: m for m in (archive_write, ingest_large, ingest_small, simulator, search,
                                   dashboard, download, subscriptions, mixed, object_store,
                                   tape, events, stage, subset)}
