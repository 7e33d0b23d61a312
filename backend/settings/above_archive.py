"""Settings of what sits above the archive: distribution (orders, the Tape REST API, pushes,
subsetting), the operator console's bulk jobs and events. Read after `base`, whose names they
extend (the beat schedule, the schema's enum names)."""
from .base import CELERY_BEAT_SCHEDULE, DATA_ROOT, SPECTACULAR_SETTINGS, env

# Distribution: per-user order limits, how long ready orders stay downloadable (signed links
# expire with them), when to warn, push retries, and the base URL links in emails point to.
GRANARY_ORDER_MAX_GRANULES = int(env("GRANARY_ORDER_MAX_GRANULES", "2000"))
GRANARY_ORDER_MAX_GB = float(env("GRANARY_ORDER_MAX_GB", "500"))
GRANARY_ORDER_MAX_OPEN = int(env("GRANARY_ORDER_MAX_OPEN", "10"))
GRANARY_ORDER_RETENTION_DAYS = float(env("GRANARY_ORDER_RETENTION_DAYS", "7"))
# The share of the cache one order may hold at once (its undelivered ready files and its
# recalls): a larger order is staged in parts, the next asked for as earlier ones are delivered.
GRANARY_ORDER_CACHE_SHARE = float(env("GRANARY_ORDER_CACHE_SHARE", "0.5"))
GRANARY_ORDER_EXPIRY_WARNING_H = float(env("GRANARY_ORDER_EXPIRY_WARNING_H", "24"))
GRANARY_PUSH_MAX_ATTEMPTS = int(env("GRANARY_PUSH_MAX_ATTEMPTS", "5"))
# The WLCG Tape REST API: files per stage request, its body's bytes, the disk lifetime a file
# gets when the request names none and the longest one may name, the site name it announces.
GRANARY_STAGE_MAX_FILES = int(env("GRANARY_STAGE_MAX_FILES", "100000"))
GRANARY_STAGE_MAX_BODY_BYTES = int(env("GRANARY_STAGE_MAX_BODY_BYTES", str(32 << 20)))
GRANARY_STAGE_DISK_LIFETIME_S = int(env("GRANARY_STAGE_DISK_LIFETIME_S", "86400"))
GRANARY_STAGE_MAX_DISK_LIFETIME_S = int(env("GRANARY_STAGE_MAX_DISK_LIFETIME_S", str(30 * 86400)))
GRANARY_TAPE_SITENAME = env("GRANARY_TAPE_SITENAME", "granary")
# The recall priority class a new stage request's files take beside orders (which are
# "normal"): high, normal or low; an operator moves one request in the console.
GRANARY_STAGE_PRIORITY = env("GRANARY_STAGE_PRIORITY", "normal")
# The longest bound a stage request states beside its ETA (staging_progress.bound_s): every
# file ends COMPLETED or FAILED by then.
GRANARY_STAGE_BOUND_MAX_S = int(env("GRANARY_STAGE_BOUND_MAX_S", str(7 * 86400)))
# SFTP destinations: Granary's private key (blank: DATA_ROOT/sftp/id_ed25519, made on first
# use) and how long to wait for a server.
GRANARY_SFTP_KEY = env("GRANARY_SFTP_KEY", "")
GRANARY_SFTP_TIMEOUT_S = float(env("GRANARY_SFTP_TIMEOUT_S", "30"))
GRANARY_SITE_URL = env("GRANARY_SITE_URL", "http://127.0.0.1:8000/")
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update({
    "OrderStateEnum": "distribution.models.Order.State",
    "StagePriorityEnum": "distribution.models.StageRequest.Priority",
    "OrderItemStateEnum": "distribution.models.OrderItem.State",
    "SubscriptionDeliveryStateEnum": "distribution.models.SubscriptionDelivery.State",
    "DestinationKindEnum": "distribution.models.Destination.Kind",
    "KindEnum": "backend.archive.models.ArchiveRequest.Kind",
    "ReconciliationScopeEnum": "backend.archive.models.Reconciliation.Scope",
    "RetiredStateEnum": "backend.catalog.retired.RETIRED_STATES",
})
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update({
    "FailureWhereEnum": "console.services.sources.WHERE",
    "FailureKindEnum": "console.services.sources.KINDS",
    "DeadLetterKindEnum": "console.services.dead_letter.KIND_NAMES",
})
CELERY_BEAT_SCHEDULE.update({
    "distribution-sweep": {"task": "distribution.sweep", "schedule": 30.0},
    "distribution-sweep-stages": {"task": "distribution.sweep_stages", "schedule": 60.0},
    "distribution-expire": {"task": "distribution.expire", "schedule": 300.0},
})

# Subsetting at order (issue #32): the transform of one file runs in a child process with these
# limits (per file; the child is kept for up to CHILD_JOBS files), on the `transform` queue; a
# worker that died mid-transform is retried after the stale time, at most this many times.
# Outputs live in the order's folder under ORDERS_ROOT.
ORDERS_ROOT = DATA_ROOT / "orders"
GRANARY_SUBSET_TIME_LIMIT_S = float(env("GRANARY_SUBSET_TIME_LIMIT_S", "900"))
GRANARY_SUBSET_MEMORY_MB = int(env("GRANARY_SUBSET_MEMORY_MB", "4096"))
GRANARY_SUBSET_MAX_ATTEMPTS = int(env("GRANARY_SUBSET_MAX_ATTEMPTS", "3"))
GRANARY_SUBSET_STALE_S = float(env("GRANARY_SUBSET_STALE_S", "1200"))
GRANARY_SUBSET_CHILD_JOBS = int(env("GRANARY_SUBSET_CHILD_JOBS", "200"))

# The operator console's bulk jobs: the most granules one job takes (a query or an id list),
# the largest id file accepted, and how many items a worker acts on between looks at cancel.
GRANARY_BULK_MAX_GRANULES = int(env("GRANARY_BULK_MAX_GRANULES", "100000"))
GRANARY_BULK_MAX_UPLOAD_BYTES = int(float(env("GRANARY_BULK_MAX_UPLOAD_MB", "8")) * 2**20)
GRANARY_BULK_CHUNK = int(env("GRANARY_BULK_CHUNK", "100"))
CELERY_BEAT_SCHEDULE.update({
    "console-bulk-sweep": {"task": "console.bulk_sweep", "schedule": 15.0},
})
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update({
    "BulkJobKindEnum": "console.models.BulkJob.Kind",
    "BulkJobStateEnum": "console.models.BulkJob.State",
    "BulkItemStateEnum": "console.models.BulkItem.State",
})

# Events (backend.events): how long they are kept, how deliveries are retried (doubling from the
# base, at most MAX_TRIES), how long one lane sends before handing back, a webhook's timeout,
# how long a rotated secret still signs, the AMQP exchange and broker (empty: Celery's), the
# address ranges webhooks may reach beside public ones; operators' alerts (docs/events.md): no
# projected miss in a day's first GRACE_S, a queue stuck after QUEUE_STUCK_S without progress.
GRANARY_EVENTS_RETENTION_DAYS = float(env("GRANARY_EVENTS_RETENTION_DAYS", "30"))
GRANARY_EVENTS_MAX_TRIES = int(env("GRANARY_EVENTS_MAX_TRIES", "8"))
GRANARY_EVENTS_RETRY_BASE_S = float(env("GRANARY_EVENTS_RETRY_BASE_S", "5"))
GRANARY_EVENTS_SLICE_S = float(env("GRANARY_EVENTS_SLICE_S", "5"))
GRANARY_EVENTS_TIMEOUT_S = float(env("GRANARY_EVENTS_TIMEOUT_S", "5"))
# a webhook's connect timeout (a dead host costs a lane this long, then its circuit opens); a
# send of SLOW_S or more marks its endpoint slow: at most SLOW_LANES slow lanes are held at once
GRANARY_EVENTS_CONNECT_TIMEOUT_S = float(env("GRANARY_EVENTS_CONNECT_TIMEOUT_S", "3"))
GRANARY_EVENTS_SLOW_S = float(env("GRANARY_EVENTS_SLOW_S", "2"))
GRANARY_EVENTS_SLOW_LANES = int(env("GRANARY_EVENTS_SLOW_LANES", "1"))
# lanes that are not slow are woken this many to a message (one task sends them in turn)
GRANARY_EVENTS_LANES_PER_TASK = int(env("GRANARY_EVENTS_LANES_PER_TASK", "8"))
GRANARY_EVENTS_ROTATION_H = float(env("GRANARY_EVENTS_ROTATION_H", "24"))
GRANARY_EVENTS_EXCHANGE = env("GRANARY_EVENTS_EXCHANGE", "granary.cloudevents")
GRANARY_EVENTS_AMQP_URL = env("GRANARY_EVENTS_AMQP_URL", "")
GRANARY_EVENTS_ALLOWED_NETS = [n for n in env("GRANARY_EVENTS_ALLOWED_NETS", "").split(",") if n]
GRANARY_ALERT_TARGET_GRACE_S = float(env("GRANARY_ALERT_TARGET_GRACE_S", "3600"))
GRANARY_ALERT_QUEUE_STUCK_S = float(env("GRANARY_ALERT_QUEUE_STUCK_S", "3600"))
CELERY_BEAT_SCHEDULE.update({
    "events-sweep": {"task": "backend.events.sweep", "schedule": 5.0},
    "archive-watch-alerts": {"task": "backend.archive.watch_alerts", "schedule": 60.0}})
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update({
    "EndpointKindEnum": "backend.events.models.Endpoint.Kind",
    "EventDeliveryStateEnum": "backend.events.models.Delivery.State"})
