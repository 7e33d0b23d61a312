"""The catalog: collections (ESDTs), granules and their files."""
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

VARIABLE_KEYS = ("name", "units", "long_name")


def validate_variables(value):
    """A collection's variables: a list of {name, units, long_name}, each a string."""
    if not isinstance(value, list) or not all(
            isinstance(v, dict) and set(v) == set(VARIABLE_KEYS)
            and all(isinstance(v[k], str) for k in VARIABLE_KEYS) for v in value):
        raise ValidationError("variables must be a list of {name, units, long_name} strings")


class CollectionQuerySet(models.QuerySet):
    def get_by_key(self, key):
        """Look up 'SHORT.VERSION' (split at the first dot: versions may hold dots)."""
        short_name, version = self.split_key(key)
        try:
            return self.get(short_name=short_name, version=version)
        except self.model.DoesNotExist:
            raise self.unknown(key) from None

    def split_key(self, key):
        """(short name, version) of 'SHORT.VERSION'; DoesNotExist, saying so, when it is not."""
        short_name, _, version = str(key).partition(".")
        if not version:
            raise self.model.DoesNotExist(f"collection key {key!r} must look like SHORT.VERSION")
        return short_name, version

    def unknown(self, key):
        return self.model.DoesNotExist(f"unknown collection {key}")


class Collection(models.Model):
    """A product type (an ESDT): short name + version, e.g. MOD021KM.061."""

    class Access(models.TextChoices):
        PUBLIC = "public", "Public"
        RESTRICTED = "restricted", "Restricted"

    class DuplicatePolicy(models.TextChoices):
        ERROR = "error", "Refuse the duplicate"
        SKIP = "skip", "Keep the archived granule"
        REPLACE = "replace", "Replace the archived granule"
        VERSION = "version", "Archive as a new version"

    short_name = models.CharField(max_length=80)
    version = models.CharField(max_length=20, help_text="Text, never a number: 061 is not 61")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    processing_level = models.CharField(max_length=10, blank=True, help_text="e.g. 1B, 2, 3")
    platform = models.CharField(max_length=80, blank=True)
    instrument = models.CharField(max_length=80, blank=True)
    doi = models.CharField(max_length=100, blank=True, help_text="e.g. 10.5067/MODIS/MOD021KM.061")
    citation = models.TextField(blank=True, help_text="How to cite the collection")
    variables = models.JSONField(default=list, blank=True, validators=[validate_variables],
                                 help_text="[{name, units, long_name}]")
    # Declared coverage (what the product covers, as its provider states it); left blank, a
    # collection page shows what its archived granules cover.
    extent_west = models.FloatField(null=True, blank=True)
    extent_south = models.FloatField(null=True, blank=True)
    extent_east = models.FloatField(null=True, blank=True)
    extent_north = models.FloatField(null=True, blank=True)
    extent_start = models.DateTimeField(null=True, blank=True)
    extent_end = models.DateTimeField(null=True, blank=True, help_text="Blank: ongoing")
    access = models.CharField(max_length=12, choices=Access.choices, default=Access.PUBLIC)
    file_patterns = models.JSONField(
        default=list, blank=True,
        help_text="Regular expressions naming the files of a granule; group 'granule' is its id",
    )
    duplicate_policy = models.CharField(
        max_length=10, choices=DuplicatePolicy.choices, default=DuplicatePolicy.ERROR,
    )
    # What completeness is judged against (catalog.cadence): one granule per cadence, archived
    # within the latency target after its temporal end. Blank: not judged.
    cadence_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="One granule expected every this many seconds")
    latency_target_seconds = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="A granule should be archived within this many seconds of its temporal end")
    approved_users = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="approved_collections", blank=True,
        help_text="Users allowed to see and order a restricted collection",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CollectionQuerySet.as_manager()

    class Meta:
        ordering = ["short_name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["short_name", "version"], name="collection_key_unique"),
        ]

    def __str__(self):
        return self.key

    @property
    def key(self):
        return f"{self.short_name}.{self.version}"

    @property
    def declared_bbox(self):
        box = [self.extent_west, self.extent_south, self.extent_east, self.extent_north]
        return None if None in box else box


class Granule(models.Model):
    """One product instance: an id within its collection, a time range, a footprint, files."""

    class State(models.TextChoices):
        REGISTERED = "registered", "Registered"
        ARCHIVING = "archiving", "Archiving"
        ARCHIVED = "archived", "Archived"
        FAILED = "failed", "Failed"
        SUPERSEDED = "superseded", "Superseded by a newer version"
        WITHDRAWN = "withdrawn", "Withdrawn (kept on tape, hidden; can be restored)"
        DELETED = "deleted", "Deleted"

    # indexed by granule_id_version_unique and granule_coll_time, which lead with it
    collection = models.ForeignKey(Collection, on_delete=models.PROTECT, related_name="granules",
                                   db_index=False)
    granule_id = models.CharField(max_length=255)
    version = models.PositiveIntegerField(default=1)
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaced_by",
    )
    state = models.CharField(max_length=12, choices=State.choices, default=State.REGISTERED)
    temporal_start = models.DateTimeField()
    temporal_end = models.DateTimeField()
    west = models.FloatField(null=True, blank=True)
    south = models.FloatField(null=True, blank=True)
    east = models.FloatField(null=True, blank=True)
    north = models.FloatField(null=True, blank=True)
    footprint = models.TextField(
        null=True, blank=True,
        help_text="GeoJSON geometry, split at the antimeridian; the box columns above bound it "
                  "and are the indexed prefilter (see catalog.shapes)")
    attributes = models.JSONField(default=dict, blank=True)
    total_size = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-temporal_start", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "granule_id", "version"], name="granule_id_version_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(temporal_end__gte=models.F("temporal_start")),
                name="granule_temporal_ordered",
            ),
        ]
        indexes = [
            # Covering: a search's footprint and window are tested in the index, so only the
            # rows of the page it returns are read from the table (see stac_query.stac_page).
            models.Index(fields=["collection", "temporal_start", "id"], name="granule_coll_time",
                         include=["temporal_end", "west", "south", "east", "north", "state"]),
            models.Index(fields=["temporal_start", "temporal_end"], name="granule_time"),
            models.Index(fields=["state", "collection"], name="granule_state"),
            # the console's granule list, newest first (keyset pages on created_at, id)
            models.Index(fields=["created_at", "id"], name="granule_created"),
            # Completeness (completeness._SLOTS_SQL): a collection's week of counted granules
            # read from the index alone, archived_at included for the late ones; without it the
            # worst-collections panel fetched each row from the table (issue #22, dashboard).
            models.Index(fields=["collection", "temporal_start"], name="granule_completeness",
                         include=["temporal_end", "archived_at"],
                         condition=models.Q(state__in=[
                             "registered", "archiving", "archived", "superseded"])),
        ]

    def __str__(self):
        return f"{self.collection.key}:{self.granule_id}"

    @property
    def bbox(self):
        if None in (self.west, self.south, self.east, self.north):
            return None
        return [self.west, self.south, self.east, self.north]


class File(models.Model):
    """A file of a granule: data, metadata, browse image or QA."""

    class Role(models.TextChoices):
        DATA = "data", "Data"
        METADATA = "metadata", "Metadata"
        BROWSE = "browse", "Browse image"
        QA = "qa", "Quality assessment"

    class ChecksumType(models.TextChoices):
        MD5 = "MD5", "MD5"
        SHA256 = "SHA256", "SHA-256"
        CKSUM = "CKSUM", "POSIX cksum (CRC)"
        ADLER32 = "ADLER32", "Adler-32"

    # indexed by file_name_unique (granule, name), which serves every lookup by granule
    granule = models.ForeignKey(Granule, on_delete=models.CASCADE, related_name="files",
                                db_index=False)
    name = models.CharField(max_length=255)
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.DATA)
    size = models.BigIntegerField()
    checksum_type = models.CharField(max_length=8, choices=ChecksumType.choices)
    checksum = models.CharField(max_length=128)

    class Meta:
        ordering = ["granule", "name"]
        constraints = [
            models.UniqueConstraint(fields=["granule", "name"], name="file_name_unique"),
        ]

    def __str__(self):
        return self.name


class GranuleStateCount(models.Model):
    """How many granules each collection has in each state, kept by statement triggers on every
    insert, update and delete of granules (PostgreSQL; migration 0012_counts_as_deltas): each
    statement adds its changes as rows, compacted by beat (backend.dbtriggers), so the
    console's state chips sum a few rows, not a count of millions, and no writer waits on
    another. On SQLite nothing keeps it and catalog.counts counts the granules."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=12, choices=Granule.State.choices)
    count = models.BigIntegerField(default=0)

    class Meta:
        # rows are deltas (several per key until compacted): readers sum them
        indexes = [models.Index(fields=["collection", "state"], name="granule_state_count_key")]

    def __str__(self):
        return f"{self.collection_id}/{self.state}: {self.count}"


class CompletenessDay(models.Model):
    """A past UTC day of a collection's completeness, kept once the day is final (nothing more
    is expected of it: its last slot and its latency target are over), so the dashboard's
    "worst collections" reads finished days instead of counting their granules again
    (catalog.completeness_days). A statement trigger on granules (PostgreSQL; migration
    0013_completeness_days_web) deletes the days a written granule's coverage touches, and a
    row computed under another cadence, latency, extent or first granule is not used."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    expected = models.IntegerField()
    received = models.IntegerField()
    gaps = models.IntegerField()
    # whether the day's first / last expected slot is missing: a gap across midnight is one
    first_missing = models.BooleanField()
    last_missing = models.BooleanField()
    late_count = models.IntegerField(null=True)
    # what the figures were computed under
    cadence_seconds = models.PositiveIntegerField()
    latency_target_seconds = models.PositiveIntegerField(null=True)
    since = models.DateTimeField(null=True)
    extent_end = models.DateTimeField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["collection", "day"],
                                               name="completeness_day_unique")]

    def __str__(self):
        return f"{self.collection_id} {self.day}: {self.received}/{self.expected}"
