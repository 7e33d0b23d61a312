"""Events of the archive tier that other apps listen to."""
from django.dispatch import Signal

# Sent (after commit) when every copy its policy requires of every file of a granule is verified.
# Arguments: granule.
granule_archived = Signal()

# Sent (after commit) once per batch of granules archived together, before granule_archived is
# sent for each: receivers with work per batch (one UPDATE for many rows) listen here.
# Arguments: granules (a list).
granules_archived = Signal()

# Sent (after commit) when recalls have put files back in the cache, once per batch committed
# together, so whoever waits for them (orders, stage requests) can move on at once instead of at
# its next sweep. Arguments: file_ids (a list).
files_recalled = Signal()

# Sent (inside the transaction that makes the change) when an operator withdraws or deletes a
# granule, so whoever holds work for it (orders, subscription deliveries, carts) drops it with
# the same reason, all or nothing. Arguments: granule, action ("withdraw"/"delete"), reason.
granule_retired = Signal()
