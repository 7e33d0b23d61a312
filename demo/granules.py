"""Demo granules with real files (demo/products.py: NetCDF-4 and HDF5 a scientist can open, an
ECS .met beside each swath, a browse PNG drawn from the data), written into the provider's
staging area and delivered as a bulk ingest request, so the demo runs the whole pipeline
(validation, metadata from the files, registration, archive, metrics).

The request names the files and what the provider's system knows besides them (day or night,
cloud cover ...) but no times or box: ingest reads those from the files, as it would for a
provider that leaves its metadata to its files."""
from backend.catalog import checksums
from ingest import services as ingest

from .products import PRODUCTS, granule_id, make_granule


def deliver_demo_granules(provider, collection, count, seed=0):
    """Write demo files into the provider's staging area and submit them as one bulk ingest
    request; returns the new request, or None when it was submitted before (same body)."""
    if collection.short_name not in PRODUCTS:
        return None
    area = ingest.staging_area(provider)
    folder = area / "demo" / collection.key
    folder.mkdir(parents=True, exist_ok=True)
    have = set(collection.granules.values_list("granule_id", flat=True))
    granules = []
    for index in range(count):
        if granule_id(collection.short_name, index, seed) in have:
            continue
        made = make_granule(collection.short_name, index, folder, seed)
        specs = []
        for name, role, path in made.files:
            digest, size = checksums.of_file("MD5", path)
            specs.append({"name": name, "path": str(path.relative_to(area)), "role": role,
                          "size": size, "checksum_type": "MD5", "checksum": digest})
        granules.append({"collection": collection.key, "granule_id": made.granule_id,
                         "attributes": made.attributes, "files": specs})
    if not granules:
        return None
    request, created = ingest.submit(provider, granules, label=f"demo {collection.key}")
    return request if created else None
