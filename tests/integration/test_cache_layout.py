"""The cache keeps files in buckets of file ids. A cache laid out the old way (a directory per
granule version) is moved by the migration, dirty files included, and nothing is lost."""
import hashlib
import importlib

import pytest
from django.apps import apps

from backend.archive import services
from backend.archive.models import CacheEntry
from tests.archive_fixtures import archived_collection, small_layout, staged_granule

pytestmark = pytest.mark.django_db
layout_migration = importlib.import_module("backend.archive.migrations.0002_cache_layout")


@pytest.fixture
def collection(data_root):
    primary, backup, _ = small_layout()
    return archived_collection([primary, backup])


def test_admitted_files_share_bucket_directories(collection, data_root):
    granules = [staged_granule(collection, data_root / "staging", sizes=(100, 200))
                for _ in range(3)]
    for granule, sources in granules:
        assert services.archive_granule(granule, sources).admitted
    paths = [services.cache_path(f) for g, _ in granules for f in g.files.all()]
    assert all(p.is_file() for p in paths)
    assert len({p.parent for p in paths}) == 1
    assert len(set(paths)) == 6


def test_a_leftover_at_the_cache_path_is_replaced(collection, data_root):
    """Bytes left at a file's cache path without a cache entry (an admission cut off before
    it committed) are replaced by the staged file, never trusted."""
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(100,))
    f = granule.files.get()
    target = services.cache_path(f)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"left over from a crash")
    assert services.archive_granule(granule, sources).admitted
    assert target.read_bytes() == sources[f.pk].read_bytes()


def test_migration_moves_an_old_cache_and_loses_nothing(collection, data_root):
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(300, 400))
    services.archive_granule(granule, sources)
    files = list(granule.files.all())
    assert {e.state for e in CacheEntry.objects.filter(file__in=files)} == {"dirty"}
    digests = {}
    for f in files:
        new = services.cache_path(f)
        old = (new.parents[1] / granule.granule_id / f"v{granule.version}" / f.name)
        old.parent.mkdir(parents=True, exist_ok=True)
        new.rename(old)
        digests[f.pk] = hashlib.md5(old.read_bytes()).hexdigest()

    layout_migration._move(apps, forward=True)
    for f in files:
        assert hashlib.md5(services.cache_path(f).read_bytes()).hexdigest() == digests[f.pk]
    assert not (services.cache_path(files[0]).parents[1] / granule.granule_id).exists()

    layout_migration._move(apps, forward=True)   # a second run changes nothing
    assert all(services.cache_path(f).is_file() for f in files)
