"""Move cache files from one directory per granule version to buckets of file ids.

Dirty files have no tape copy yet, so they are moved, not dropped: nothing in the cache is lost.
Runs again harmlessly (a file already moved is left alone); going back moves them back."""
import os
from pathlib import Path

from django.conf import settings
from django.db import migrations

BUCKET = 1000


def _paths(entry):
    f, g = entry.file, entry.file.granule
    key = f"{g.collection.short_name}.{g.collection.version}"
    root = Path(settings.CACHE_ROOT) / key
    return (root / g.granule_id / f"v{g.version}" / f.name,
            root / f"{f.pk // BUCKET:06d}" / f"{f.pk}-{f.name}")


def _move(apps, forward):
    CacheEntry = apps.get_model("archive", "CacheEntry")
    entries = CacheEntry.objects.select_related("file__granule__collection").iterator(2000)
    for entry in entries:
        old, new = _paths(entry)
        source, target = (old, new) if forward else (new, old)
        if source.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            for parent in (source.parent, source.parent.parent):
                try:
                    parent.rmdir()
                except OSError:
                    break


class Migration(migrations.Migration):
    dependencies = [("archive", "0001_initial")]

    operations = [
        migrations.RunPython(lambda apps, _: _move(apps, True),
                             lambda apps, _: _move(apps, False), elidable=False),
    ]
