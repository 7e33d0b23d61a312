"""What a personal token's scopes let it do: pure policy, no Django.

Reading (GET, HEAD, OPTIONS, and the searches that POST a query) needs "read"; a change needs
the scope of the part of the API it changes: orders, the cart, subscriptions, destinations,
stage requests (the Tape REST API too) and event endpoints "order"; ingest "ingest"; anything
else (the console, configuration, the archive) "operate".
Roles still decide on top of scopes.
"""

READ = "read"
ORDER = "order"
INGEST = "ingest"
OPERATE = "operate"
ALL = (READ, ORDER, INGEST, OPERATE)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CHANGE_SCOPES = (
    ("/api/v1/granules/", READ),  # searches that POST their query
    ("/stac/", READ),
    ("/api/v1/ingest/", INGEST),
    ("/api/v1/orders/", ORDER),
    ("/api/v1/cart/", ORDER),
    ("/api/v1/subscriptions/", ORDER),
    ("/api/v1/destinations/", ORDER),
    ("/api/v1/shapes/", ORDER),
    ("/api/v1/auth/", READ),  # signing out, or minting a script token, changes nothing else
    ("/api/tape/v1/archiveinfo", READ),  # a locality query that POSTs its paths
    ("/api/tape/", ORDER),  # bulk staging is ordering by another protocol
    ("/api/v1/stage-requests/", ORDER),
    ("/api/v1/event-endpoints/", ORDER),  # where one's own events go, as subscriptions
)


def needed(method, path):
    """The scope a request needs."""
    if method.upper() in SAFE_METHODS:
        return READ
    for prefix, scope in CHANGE_SCOPES:
        if path.startswith(prefix):
            return scope
    return OPERATE


def normalise(scopes):
    """The known scopes among `scopes`, in their canonical order; ValueError on an unknown one."""
    unknown = set(scopes) - set(ALL)
    if unknown:
        raise ValueError(f"unknown scope {sorted(unknown)[0]!r}; choose from {', '.join(ALL)}")
    return [scope for scope in ALL if scope in set(scopes)]
