"""The ingest pipeline: requests in; granules through stage -> validate -> metadata -> register ->
archive; PDRDs and PANs out.

- accept: submit(provider, granules, ...) checks a request as a whole (shape, names, rights)
  and stores it with one row per granule; nothing is written when any granule is malformed.
- pipeline: process_chunk(request_id, start, stop) carries up to GRANARY_INGEST_CHUNK granules
  (fewer when they reach GRANARY_INGEST_CHUNK_BYTES)
  through the pipeline under a lease, with bulk state updates (registration: the catalog and
  the archive tier). A granule that fails gets a reason (and an ECS disposition) and never
  holds up the others; outcome.retry() sends failed granules round again.
- outcome: the archive tier says when granules are ARCHIVED (signal granules_archived); then
  the request's counters move, and a finished PDR request gets its PAN (pdr_flow).
- periodic: sweep() (beat) re-kicks work whose worker died, admits granules that waited for
  cache room and finishes what is finished; clean_staging() drops staged copies after the
  retention.
- uploads, polling, directory: the ways files reach a staging area (staging) and become
  requests besides the API: uploads, PDRs and drop directories, the command line.

Only what other apps use is exported here; the ingest app imports from the modules.
"""
from .accept import submit
from .explain import explain, explain_failed
from .outcome import archive_gave_up, retry
from .staging import staging_area

__all__ = ["archive_gave_up", "explain", "explain_failed", "retry", "staging_area", "submit"]
