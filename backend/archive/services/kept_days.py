"""Reconciliation's look at the catalog's kept completeness days (catalog.completeness_days):
a random sample of them counted again from the granule rows. A kept day that differs (a write
the trigger missed: a load that bypassed it, a hand edit) is a discrepancy, and its repair
forgets the day, so the next poll that needs it counts it again. Registered with the archive's
promises when the archive app is ready (the catalog, below the archive, cannot register)."""
from backend.catalog import completeness_days

from .. import invariants

COMPLETENESS_DAY_STALE = "completeness_day_stale"
SAMPLE = 20   # kept days counted again per check


def check():
    found = []
    for row, counted in completeness_days.stale_sample(SAMPLE):
        kept = {k: getattr(row, k) for k in counted}
        differ = ", ".join(f"{k} {kept[k]} kept, {counted[k]} counted"
                           for k in counted if kept[k] != counted[k])
        found.append(invariants.Violation(
            COMPLETENESS_DAY_STALE, f"{row.collection.key} {row.day}: {differ}",
            extra={"collection": row.collection_id, "day": row.day.isoformat(),
                   "counted": counted}))
    return found


def forget(discrepancy):
    deleted = completeness_days.forget(discrepancy.extra.get("collection"),
                                       discrepancy.extra.get("day"))
    return "forgotten: counted again when next needed" if deleted else "already forgotten"


def register():
    invariants.register("catalog.completeness_days", check, repairs={
        COMPLETENESS_DAY_STALE: ("forget the kept day", forget)})
