"""What the console's bulk recalls still wait for, told to the archive: a stage request
cancelled or deleted must not cancel a recall an operator's bulk recall job waits for (the
archive cannot ask the console, which sits above it, so the console registers this answer)."""
from backend.archive.services import register_recall_needer
from backend.catalog.models import File

from ...models import BulkItem, BulkJob


def files_waited_for(file_ids):
    """The file ids among `file_ids` whose granule a recall job's item waits for."""
    waiting = BulkItem.objects.filter(state=BulkItem.State.WAITING,
                                      job__kind=BulkJob.Kind.RECALL,
                                      job__state__in=[BulkJob.State.QUEUED,
                                                      BulkJob.State.RUNNING])
    return set(File.objects.filter(pk__in=list(file_ids),
                                   granule_id__in=waiting.values("granule_id"))
               .values_list("pk", flat=True))


def register():
    register_recall_needer("console.bulk_recall", files_waited_for)
