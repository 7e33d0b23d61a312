"""Setup of the stage journey (run by `manage.py shell`): 2,000 small files of a collection of
their own, already on four fresh tape volumes of the demo's primary group and not in the cache,
and the scientist's API token; the primary silo's drives varied off, so the request's recalls
wait for the journey's cancel (at time scale 0 they could all finish before it). Prints the
files' Tape REST API paths, the token and the drives' names as JSON."""
import json

from django.contrib.auth import get_user_model

from backend.accounts import tokens
from backend.archive import operations
from backend.archive.models import Drive, Volume
from backend.catalog.models import Collection
from bench.stage import files_on_tape

primary, _ = operations.install_layout()
collection = Collection.objects.create(short_name="STAGEJOURNEY", version="1",
                                       title="Stage journey granules")
operations.set_policy(collection, [primary])
media = Drive.objects.filter(silo=primary.silo).first().model
operations.label_volumes(primary.silo, media, 4, "SJ")
volumes = list(Volume.objects.filter(label__startswith="SJ").select_related("silo"))
_, files = files_on_tape(collection, primary, volumes, 20, 100, 2048)
scientist = get_user_model().objects.get(username="scientist")
token = tokens.issue(scientist, "stage journey")[1]
held = [operations.vary_drive(d, False, "stage journey: held until the cancel").name
        for d in Drive.objects.filter(silo=primary.silo)]
print(json.dumps({"token": token, "drives": held,
                  "paths": [f"/{collection.key}/{f.granule.granule_id}/{f.name}" for f in files]}))
