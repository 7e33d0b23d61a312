"""The archive tier: RAID cache, silos, drives, volumes, volume groups, copies and requests."""
from django.conf import settings
from django.db import models

from .moved import last_moved


def percent(part, whole):
    """part as a percentage of whole, to one decimal; 0.0 when there is no whole."""
    return round(100.0 * part / whole, 1) if whole else 0.0


class Silo(models.Model):
    """A robotic library: slots for cartridges and a robot that moves them to drives."""

    name = models.SlugField(max_length=40, unique=True)
    robot_exchange_s = models.FloatField(default=10.0, help_text="Seconds to move a cartridge")
    slots = models.PositiveIntegerField(default=1000)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class DriveModel(models.Model):
    """Timings and media of a drive type (e.g. STK SD-3, IBM 3480)."""

    name = models.CharField(max_length=80, unique=True)
    rate_mb_s = models.FloatField(help_text="Sustained transfer rate, MB/s")
    mount_s_min = models.FloatField(default=20.0)
    mount_s_max = models.FloatField(default=40.0)
    unmount_s = models.FloatField(default=30.0)
    position_s_per_gb = models.FloatField(default=2.0, help_text="Locate cost per GB of distance")
    capacity_bytes = models.BigIntegerField(help_text="Media capacity")

    def __str__(self):
        return self.name


class VolumeGroup(models.Model):
    """Volumes that hold one set of collections together (co-location), for one copy role."""

    class Role(models.TextChoices):
        PRIMARY = "primary", "Primary copy"
        BACKUP = "backup", "Backup copy"

    medium = "tape"

    name = models.SlugField(max_length=60, unique=True)
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.PRIMARY)
    silo = models.ForeignKey(
        Silo, null=True, blank=True, on_delete=models.PROTECT, related_name="volume_groups",
        help_text="Silo its volumes live in (copies of one granule go to different silos)",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Volume(models.Model):
    """A cartridge; on disk a pax tar file under volumes/<silo>/<label>."""

    class State(models.TextChoices):
        SCRATCH = "scratch", "Scratch"
        FILLING = "filling", "Filling"
        FULL = "full", "Full"
        READ_ONLY = "read_only", "Read-only"
        SUSPECT = "suspect", "Suspect"
        RETIRED = "retired", "Retired"

    label = models.CharField(max_length=16, unique=True)
    silo = models.ForeignKey(Silo, on_delete=models.PROTECT, related_name="volumes")
    media = models.ForeignKey(DriveModel, on_delete=models.PROTECT, related_name="volumes")
    group = models.ForeignKey(
        VolumeGroup, null=True, blank=True, on_delete=models.PROTECT, related_name="volumes",
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.SCRATCH)
    capacity_bytes = models.BigIntegerField()
    end_of_data = models.BigIntegerField(
        default=0, help_text="Byte offset where the next write starts (after the last member)",
    )
    live_bytes = models.BigIntegerField(default=0, help_text="Bytes of copies still in use")
    file_count = models.PositiveIntegerField(default=0)
    mount_count = models.PositiveIntegerField(default=0)
    last_dismounted_at = models.DateTimeField(null=True, blank=True)
    fault = models.CharField(
        max_length=10, blank=True, help_text="Injected fault (tests, demos): 'bad' fails reads",
    )
    state_reason = models.CharField(
        max_length=300, blank=True,
        help_text="Why a fault took the volume out of writing or reading (a write-protected "
                  "cartridge, a suspect volume); cleared when it is recycled",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["label"]
        indexes = [models.Index(fields=["group", "state"], name="volume_group_state")]

    def __str__(self):
        return self.label

    @property
    def free_bytes(self):
        return max(0, self.capacity_bytes - self.end_of_data)

    @property
    def percent_full(self):
        return percent(self.end_of_data, self.capacity_bytes)


class Drive(models.Model):
    """A tape drive in a silo. Varied off after repeated errors."""

    class State(models.TextChoices):
        IDLE = "idle", "Idle"
        MOUNTING = "mounting", "Mounting"
        READING = "reading", "Reading"
        WRITING = "writing", "Writing"
        UNLOADING = "unloading", "Unloading"
        OFFLINE = "offline", "Offline"

    name = models.SlugField(max_length=40, unique=True)
    silo = models.ForeignKey(Silo, on_delete=models.PROTECT, related_name="drives")
    model = models.ForeignKey(DriveModel, on_delete=models.PROTECT, related_name="drives")
    state = models.CharField(max_length=10, choices=State.choices, default=State.IDLE)
    mounted_volume = models.OneToOneField(
        Volume, null=True, blank=True, on_delete=models.SET_NULL, related_name="drive")
    mounted_at = models.DateTimeField(null=True, blank=True)
    mode = models.CharField(max_length=5, blank=True, help_text="read or write: the mount's use")
    head_position = models.BigIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    consecutive_errors = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    offline_reason = models.CharField(max_length=200, blank=True)
    fault = models.JSONField(
        default=dict, blank=True,
        help_text='Injected faults: {"mount": n, "write": n, "read": n} fail after n more calls',
    )
    current_rate_b_s = models.FloatField(default=0)
    lease_owner = models.CharField(
        max_length=64, blank=True, help_text="The mover process working this drive now",
    )
    lease_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["silo__name", "name"]

    def __str__(self):
        return self.name


class Bucket(models.Model):
    """A bucket of an S3-compatible object store as a copy target, beside the volume groups.

    `store` names an entry of settings.GRANARY_OBJECT_STORES (its endpoint and credentials stay
    out of the database); `name` is the target's name in policies, unique among targets."""

    medium = "object"

    name = models.SlugField(max_length=60, unique=True)
    store = models.CharField(max_length=40, default="default")
    bucket = models.CharField(max_length=63, help_text="The bucket's name on the server")
    prefix = models.CharField(max_length=200, blank=True, help_text="Keys start with this")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["store", "bucket", "prefix"],
                                               name="bucket_place_unique")]

    def __str__(self):
        return self.name


class ArchivePolicy(models.Model):
    """How a collection is archived: copies, and how long new granules stay in the cache."""

    collection = models.OneToOneField(
        "catalog.Collection", on_delete=models.CASCADE, related_name="archive_policy")
    cache_residency_days = models.PositiveIntegerField(
        default=0, help_text="Keep new granules in the cache this long (a data pool)",
    )

    class Meta:
        verbose_name_plural = "archive policies"

    def __str__(self):
        return f"policy of {self.collection}"

    @property
    def copies(self):
        return self.copy_groups.count()


class PolicyCopy(models.Model):
    """Copy number N of a policy goes to this target: a volume group (tape) or a bucket."""

    policy = models.ForeignKey(ArchivePolicy, on_delete=models.CASCADE, related_name="copy_groups")
    copy_number = models.PositiveSmallIntegerField()
    volume_group = models.ForeignKey(VolumeGroup, null=True, blank=True,
                                     on_delete=models.PROTECT, related_name="+")
    bucket = models.ForeignKey(Bucket, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="+")

    class Meta:
        ordering = ["policy", "copy_number"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "copy_number"], name="policy_copy_unique"),
            models.UniqueConstraint(fields=["policy", "volume_group"], name="policy_group_unique"),
            models.UniqueConstraint(fields=["policy", "bucket"], name="policy_bucket_unique"),
            models.CheckConstraint(
                condition=models.Q(volume_group__isnull=False, bucket__isnull=True)
                | models.Q(volume_group__isnull=True, bucket__isnull=False),
                name="policy_copy_one_target"),
        ]

    def __str__(self):
        return f"{self.policy.collection} copy {self.copy_number} -> {self.target}"

    @property
    def target(self):
        return self.volume_group or self.bucket


class FileCopy(models.Model):
    """A copy (or one segment of a copy that spans volumes) of a file on a medium: a member of
    a tape volume (volume, position, data offset) or an object in a bucket (key, ETag, version).
    An object copy is always one whole segment."""

    class State(models.TextChoices):
        WRITTEN = "written", "Written, not yet verified"
        VERIFIED = "verified", "Verified"
        BAD = "bad", "Bad (failed a check)"
        RELEASED = "released", "Released (space to reclaim)"

    file = models.ForeignKey("catalog.File", on_delete=models.CASCADE, related_name="copies")
    copy_number = models.PositiveSmallIntegerField()
    segment = models.PositiveSmallIntegerField(default=0)
    file_offset = models.BigIntegerField(default=0, help_text="Segment start in the file")
    # indexed by filecopy_volume_pos, which leads with the volume
    volume = models.ForeignKey(Volume, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="copies", db_index=False)
    position = models.BigIntegerField(
        default=0, help_text="Byte offset of the member header on the volume")
    data_offset = models.BigIntegerField(
        default=0, help_text="Byte offset of the data on the volume")
    bucket = models.ForeignKey(Bucket, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="copies", db_index=False)
    key = models.CharField(max_length=1024, blank=True, help_text="The object's key")
    etag = models.CharField(max_length=80, blank=True, help_text="As the store answered it")
    version_id = models.CharField(max_length=200, blank=True,
                                  help_text="The object's version, where the bucket keeps them")
    length = models.BigIntegerField()
    checksum_type = models.CharField(max_length=8)
    checksum = models.CharField(max_length=128, help_text="Of this segment's bytes")
    state = models.CharField(max_length=10, choices=State.choices, default=State.WRITTEN)
    verified_at = models.DateTimeField(null=True, blank=True)
    blocks = models.BinaryField(
        null=True, blank=True,
        help_text="a whole-file copy on tape: the block map (serving.block_sum of each 4 MiB "
                  "block) of the bytes its write's read-back matched to the catalog checksum; "
                  "a recall checks the bytes it reads against it instead of hashing them again",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["file", "copy_number", "segment"]
        constraints = [
            models.UniqueConstraint(
                fields=["file", "copy_number", "segment"],
                condition=~models.Q(state="released"),
                name="filecopy_live_segment_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(volume__isnull=False, bucket__isnull=True)
                | models.Q(volume__isnull=True, bucket__isnull=False),
                name="filecopy_one_medium"),
        ]
        indexes = [models.Index(fields=["volume", "position"], name="filecopy_volume_pos"),
                   models.Index(fields=["bucket", "key"], name="filecopy_bucket_key",
                                condition=models.Q(bucket__isnull=False)),
                   models.Index(fields=["file"], name="filecopy_bad",  # repair's, every tick
                                condition=models.Q(state="bad"))]

    def __str__(self):
        return f"{self.file} copy {self.copy_number}.{self.segment} on {self.where}"

    @property
    def medium(self):
        return "tape" if self.volume_id else "object"

    @property
    def where(self):
        """Where the copy lies, for people: its volume, or its bucket and key."""
        if self.volume_id:
            return str(self.volume)
        if self.data_offset:   # a member of a pack
            return f"{self.bucket.name}/{self.key} at byte {self.data_offset}"
        return f"{self.bucket.name}/{self.key}"


class CacheEntry(models.Model):
    """A file in the RAID cache. Dirty files have a copy still to write; pinned stay put."""

    class State(models.TextChoices):
        STAGING = "staging", "Bytes arriving"
        DIRTY = "dirty", "Dirty (not yet on tape)"
        CLEAN = "clean", "Clean"
        PINNED = "pinned", "Pinned (clean, kept)"

    file = models.OneToOneField(
        "catalog.File", on_delete=models.CASCADE, related_name="cache_entry",
    )
    state = models.CharField(max_length=8, choices=State.choices, default=State.DIRTY)
    pinned = models.BooleanField(default=False, help_text="Kept in the cache until unpinned")
    size = models.BigIntegerField()
    last_access = models.DateTimeField()
    keep_until = models.DateTimeField(null=True, blank=True, help_text="Data-pool residency")
    checked = models.CharField(
        max_length=64, blank=True, default="", db_default="",
        help_text="size:mtime_ns:inode of the cached file when its bytes last matched the "
                  "catalog checksum; a file that no longer has it is hashed again before use",
    )
    verified_at = models.DateTimeField(
        null=True, blank=True,
        help_text="when the cached bytes were last read in full and matched the catalog "
                  "checksum (ingest, recall, a download, the scrub); a range is served only "
                  "from a file verified within GRANARY_CACHE_SCRUB_S",
    )
    blocks = models.BinaryField(
        null=True, blank=True,
        help_text="the check (64-bit XXH3, serving.block_sum) of each 4 MiB block, taken in "
                  "the pass that last matched the catalog checksum: whole-file reads check each "
                  "block against it before sending it; null until a full pass has recorded it",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "cache entries"
        indexes = [models.Index(fields=["state", "last_access"], name="cache_state_lru"),
                   models.Index(fields=["verified_at"], name="cache_verified")]  # the scrub

    def __str__(self):
        return f"{self.file} ({self.state})"


class ArchiveRequest(models.Model):
    """Work for the storage manager: migrate, recall, repack or audit. The database is the queue."""

    class Kind(models.TextChoices):
        MIGRATE = "migrate", "Migrate (cache to tape)"
        RECALL = "recall", "Recall (tape to cache)"
        REPACK = "repack", "Repack a volume"
        AUDIT = "audit", "Fixity audit"

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Priority(models.IntegerChoices):
        OPERATOR = 0, "Operator"
        USER = 1, "User recall"
        MIGRATION = 2, "Migration"
        BACKGROUND = 3, "Background (repack, audit)"

    class Share(models.TextChoices):  # whom a recall serves: its first asker (RecallShare)
        ORDER = "order", "Portal and API orders"
        SUBSCRIPTION = "subscription", "Subscriptions"
        STAGE = "stage", "Stage requests (Tape REST API)"
        BULK = "bulk", "Operators' bulk recalls"
        OTHER = "", "Other (downloads, repairs, background)"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    priority = models.PositiveSmallIntegerField(choices=Priority.choices)
    # indexed by request_file (file, kind, state), which serves every lookup by file
    file = models.ForeignKey(
        "catalog.File", null=True, blank=True, on_delete=models.CASCADE, related_name="+",
        db_index=False,
    )
    copy_number = models.PositiveSmallIntegerField(null=True, blank=True)
    # No index of their own on group and drive: nothing looks requests up by them (the queue
    # index serves the running ones), and each index costs every insert and state change.
    volume_group = models.ForeignKey(
        VolumeGroup, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        db_index=False,
    )
    volume = models.ForeignKey(
        Volume, null=True, blank=True, on_delete=models.PROTECT, related_name="requests",
        db_index=False,
    )
    # A migration to a bucket, or a recall the object store serves: the object movers' work
    bucket = models.ForeignKey(Bucket, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="+", db_index=False)
    # held by an object mover until then (tape work is held by its drive's lease)
    lease_until = models.DateTimeField(null=True, blank=True)
    drive = models.ForeignKey(
        Drive, null=True, blank=True, on_delete=models.SET_NULL, related_name="requests",
        db_index=False,
    )
    share = models.CharField(max_length=12, choices=Share.choices, blank=True, default="")
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["priority", "created_at"]
        indexes = [
            models.Index(fields=["state", "kind", "priority"], name="request_queue",  # not done
                         condition=models.Q(state__in=["queued", "running", "failed"])),
            models.Index(fields=["file", "kind", "state"], name="request_file"),
            # Partial: migrations (nearly all) name no volume nor user: no entry in these two
            models.Index(fields=["volume"], name="request_volume",
                         condition=models.Q(volume__isnull=False)),
            models.Index(fields=["requested_by"], name="request_user",
                         condition=models.Q(requested_by__isnull=False)),
            # Partial: the object tier's board and metrics read its finished work by bucket
            models.Index(fields=["bucket", "state", "finished_at"], name="request_bucket",
                         condition=models.Q(bucket__isnull=False)),
            # Partial: the fair share counts recalls done lately per kind (services.shares)
            models.Index(fields=["finished_at"], name="request_recalled", include=["share"],
                         condition=models.Q(kind="recall", state="done")),
            # alerts.watch_queues: has a queue moved lately (a scan of its kind without this)
            models.Index("kind", "volume_group", last_moved(), name="request_moved"),
            # Partial and covering: the queues board sums pending work from this index alone
            models.Index(fields=["kind", "state", "volume_group", "created_at"],
                         name="request_pending", include=["bytes_total", "bytes_done", "id"],
                         condition=models.Q(state__in=["queued", "running"])),
        ]
        # No two queued or running requests for the same work: two movers, two repacks or a
        # repack beside a repair can otherwise queue one copy twice and write it twice.
        constraints = [
            models.UniqueConstraint(
                fields=fields, name=f"request_one_active_{kind}",
                condition=models.Q(kind=kind, state__in=["queued", "running"]))
            for kind, fields in (("migrate", ["file", "copy_number"]), ("recall", ["file"]),
                                 ("audit", ["file", "copy_number", "volume"]),
                                 ("repack", ["volume"]))
        ]

    def __str__(self):
        return f"{self.kind} #{self.pk} ({self.state})"

    @property
    def percent_done(self):
        return percent(self.bytes_done, self.bytes_total)


# the reconciliation runs live in a module of their own (this one stays under 500 lines)
from .reconciliation_models import Discrepancy, Reconciliation  # noqa: E402, F401
from .share_models import RecallShare  # noqa: E402, F401
from .total_models import CacheStateTotal, QueueTotal  # noqa: E402, F401

