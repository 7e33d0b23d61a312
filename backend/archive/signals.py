"""Events of the archive tier that other apps listen to."""
from django.dispatch import Signal

# Sent (after commit) when every copy its policy requires of every file of a granule is verified.
# Arguments: granule.
granule_archived = Signal()
