"""Granules keep their footprint geometry; those registered before are given their box's."""
import json

from django.db import migrations, models


def box_geojson(west, south, east, north):
    """The GeoJSON of a box, split at the antimeridian when west > east (kept here, not
    imported, so this migration reads the same whatever catalog.shapes becomes)."""
    spans = [(west, 180.0), (-180.0, east)] if west > east else [(west, east)]
    parts = []
    for lo, hi in spans:
        if lo == hi and south == north:
            parts.append(("Point", [lo, south]))
        elif lo == hi or south == north:
            parts.append(("LineString", [[lo, south], [hi, north]]))
        else:
            parts.append(("Polygon", [[[lo, south], [hi, south], [hi, north], [lo, north],
                                       [lo, south]]]))
    if len(parts) == 1:
        kind, coordinates = parts[0]
    elif all(kind == "Polygon" for kind, _ in parts):
        kind, coordinates = "MultiPolygon", [c for _, c in parts]
    else:
        kind = "GeometryCollection"
        return json.dumps({"type": kind, "geometries": [
            {"type": k, "coordinates": c} for k, c in parts]})
    return json.dumps({"type": kind, "coordinates": coordinates})


def fill_footprints(apps, schema_editor):
    Granule = apps.get_model("catalog", "Granule")
    boxed = Granule.objects.filter(footprint__isnull=True, west__isnull=False, south__isnull=False,
                                   east__isnull=False, north__isnull=False).order_by("pk")
    last = 0
    while True:
        chunk = list(boxed.filter(pk__gt=last).only("pk", "west", "south", "east", "north")[:2000])
        if not chunk:
            return
        for granule in chunk:
            granule.footprint = box_geojson(granule.west, granule.south, granule.east,
                                            granule.north)
        Granule.objects.bulk_update(chunk, ["footprint"])
        last = chunk[-1].pk


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0005_collection_page_fields"),
    ]

    operations = [
        migrations.AddField(
            model_name="granule",
            name="footprint",
            field=models.TextField(blank=True, help_text="GeoJSON geometry, split at the antimeridian; the box columns above bound it and are the indexed prefilter (see catalog.shapes)", null=True),
        ),
        migrations.RunPython(fill_footprints, migrations.RunPython.noop, elidable=True),
    ]
