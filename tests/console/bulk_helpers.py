"""Building blocks for bulk job tests: archived granules with real bytes, and a job driven
to its end the way the workers would (the job's task, the movers, the job's task again)."""
from backend.archive import operations, services
from backend.archive.models import CacheEntry
from console.services.bulk import runner
from tests.archive_fixtures import staged_granule


def archive(collection, data_root, count, sizes=(3000, 1500)):
    """`count` granules of `sizes` files, every copy written and verified."""
    granules = []
    for _ in range(count):
        granule, sources = staged_granule(collection, data_root / "staging", sizes=sizes)
        assert services.archive_granule(granule, sources).admitted
        granules.append(granule)
    services.run_until_idle()
    for g in granules:
        g.refresh_from_db()
    return granules


def release(granules):
    files = [f for g in granules for f in g.files.all()]
    operations.release(files)
    assert not CacheEntry.objects.filter(file__in=files).exists()


def drive_to_end(job, rounds=10):
    """Run the job, the movers, the job again, until it is final (as beat would)."""
    state = None
    for _ in range(rounds):
        state = runner.run(job.pk)
        if state not in ("queued", "running"):
            return state
        services.run_until_idle()
    return state
