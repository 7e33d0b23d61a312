"""The granule and request states every step of the pipeline speaks of."""
from ..models import IngestGranule, IngestRequest

G = IngestGranule.State
R = IngestRequest.State
PRE_ARCHIVE = (G.RECEIVED, G.STAGED, G.VALIDATED)
FINAL = (G.ARCHIVED, G.FAILED)
