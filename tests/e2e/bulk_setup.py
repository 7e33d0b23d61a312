"""Setup of the bulk journey (run by `manage.py shell`): COUNT granules of a collection of
their own, real bytes staged and handed to the archive, whose worker writes them to tape.
Prints the file ids as JSON for the journey to release from the cache once on tape."""
import json
import os

from django.conf import settings

from backend.archive import operations, services
from tests.archive_fixtures import archived_collection, staged_granule

count = int(os.environ.get("E2E_BULK_GRANULES", "100"))
primary, backup = operations.install_layout()
collection = archived_collection([primary, backup], short_name="BULKJOURNEY", version="001",
                                 title="Bulk journey granules")
staging = settings.STAGING_ROOT / "bulk-journey"
staging.mkdir(parents=True, exist_ok=True)
made = [staged_granule(collection, staging, sizes=(20_000,)) for _ in range(count)]
services.archive_granules(made)
print(json.dumps({"collection": collection.key,
                  "files": [pk for _, sources in made for pk in sources]}))
