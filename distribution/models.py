"""Orders, subscriptions and deliveries: what users asked for and what reached them."""
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Lower

from backend.accounts.ownership import Ownership


class CartItem(models.Model):
    """A granule a user has set aside to order."""

    ownership = Ownership("user", operators=False)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="cart_items")
    granule = models.ForeignKey("catalog.Granule", on_delete=models.CASCADE, related_name="+")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["added_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "granule"], name="cart_user_granule_unique"),
        ]

    def __str__(self):
        return f"{self.user} cart: {self.granule_id}"


class Destination(models.Model):
    """Where a user's push deliveries are copied: a folder in the user's own folder of the
    outbox (OUTBOX_ROOT/<username>/, never another's), or a directory on the user's own SFTP
    server, which Granary logs in to with its own key pair (no user password is ever stored)
    after checking the server's host key against the pinned one."""

    ownership = Ownership("user", operators=False)

    class Kind(models.TextChoices):
        FOLDER = "folder", "Folder under the outbox"
        SFTP = "sftp", "SFTP server"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="destinations")
    name = models.CharField(max_length=80)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.FOLDER)
    path = models.CharField(
        max_length=255, blank=True,
        help_text="folder: inside the owner's own folder of the outbox <username>/, blank "
                  "for <name>; sftp: remote directory, absolute or relative to the login "
                  "directory (blank: that one)")
    host = models.CharField(max_length=255, blank=True, help_text="sftp: server name or address")
    port = models.PositiveIntegerField(
        default=22, validators=[MinValueValidator(1), MaxValueValidator(65535)])
    username = models.CharField(max_length=64, blank=True, help_text="sftp: user to log in as")
    host_key = models.TextField(
        blank=True, help_text="sftp: the server's public host key, '<type> <base64>', as in "
                              "known_hosts or ssh-keyscan output")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="destination_user_name_unique"),
        ]

    def __str__(self):
        return f"{self.user}:{self.name}"


class Delivery(models.TextChoices):
    HTTPS = "https", "HTTPS download links"
    PUSH = "push", "Copy into a destination directory"


class Order(models.Model):
    """A user's request for granules; a subscription's standing order never completes."""

    ownership = Ownership("user")

    class State(models.TextChoices):
        # The labels are the words every page shows (the API sends them as state_label).
        SUBMITTED = "submitted", "Submitted"
        STAGING = "staging", "Waiting for tape"
        READY = "ready", "Ready"
        PARTIALLY_READY = "partially_ready", "Ready in part"
        COMPLETED = "completed", "Delivered"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"
        EXPIRED = "expired", "Expired"

    OPEN = (State.SUBMITTED, State.STAGING, State.READY, State.PARTIALLY_READY)
    FINAL = (State.COMPLETED, State.FAILED, State.CANCELLED, State.EXPIRED)

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="orders")
    state = models.CharField(max_length=16, choices=State.choices, default=State.SUBMITTED)
    delivery = models.CharField(max_length=8, choices=Delivery.choices, default=Delivery.HTTPS)
    destination = models.ForeignKey(Destination, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="orders")
    subscription = models.OneToOneField(
        "Subscription", null=True, blank=True, on_delete=models.CASCADE,
        related_name="standing_order",
    )
    total_bytes = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    notified_state = models.CharField(max_length=16, blank=True)
    expiry_warned = models.BooleanField(default=False)
    push_attempts = models.PositiveSmallIntegerField(default=0)
    subset = models.JSONField(
        default=dict, blank=True,
        help_text="What is cut out of each data file (distribution.subset): variables, bbox or "
                  "intersects, start, end, format; empty: the files as delivered")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ready_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["state", "expires_at"], name="order_state_expiry"),
            models.Index(fields=["user", "state"], name="order_user_state"),
        ]

    def __str__(self):
        return f"order #{self.pk} ({self.state})"


class OrderItem(models.Model):
    """One file of an ordered granule, with its own state and where its bytes are.

    In an order with a subset, a data file waits in the cache (in_cache) while the transform
    cuts it; its output lives in the order's folder (output_*), and an output with nothing in
    it is the EMPTY outcome, not a failure."""

    ownership = Ownership("order__user")

    class State(models.TextChoices):
        WAITING = "waiting", "Waiting"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"
        EMPTY = "empty", "Nothing inside the subset"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="items")
    granule = models.ForeignKey("catalog.Granule", on_delete=models.PROTECT, related_name="+")
    file = models.ForeignKey("catalog.File", on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.WAITING)
    in_cache = models.BooleanField(default=False)
    recall_request_id = models.BigIntegerField(null=True, blank=True)
    eta_s = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    ready_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    downloaded_at = models.DateTimeField(null=True, blank=True)
    pushed_at = models.DateTimeField(null=True, blank=True)
    transform_attempts = models.PositiveSmallIntegerField(default=0)
    transform_started_at = models.DateTimeField(null=True, blank=True)
    output_name = models.CharField(max_length=255, blank=True)
    output_size = models.BigIntegerField(null=True, blank=True)
    output_checksum = models.CharField(max_length=128, blank=True,
                                       help_text="Checksum of the output, of output_checksum_type")
    output_checksum_type = models.CharField(max_length=16, default="MD5", blank=True)
    provenance = models.JSONField(default=dict, blank=True,
                                  help_text="What the transform did: source, options, versions")

    class Meta:
        ordering = ["granule_id", "file_id"]
        constraints = [
            models.UniqueConstraint(fields=["order", "file"], name="order_item_file_unique"),
        ]
        indexes = [models.Index(fields=["order", "state"], name="order_item_state")]

    def __str__(self):
        return f"order #{self.order_id} file {self.file_id} ({self.state})"

    @property
    def served(self):
        return Served(self)


# A cut output's checksum, taken in the transform's one pass over it: SHA-256 (the CPU's SHA
# instructions make it ~2.5x as fast as MD5 here, and stronger). Outputs made before say MD5.
OUTPUT_CHECKSUM = "SHA256"


class Served:
    """What an item delivers: its output when it was cut to a subset, else the catalog's file
    (name, size, checksum: what links, downloads and pushes say and check)."""

    def __init__(self, item=None, file=None):
        self.cut = item is not None and item.output_size is not None
        file = item.file if item is not None else file
        self.pk = file.pk
        self.name = item.output_name if self.cut else file.name
        self.size = item.output_size if self.cut else file.size
        self.checksum_type = item.output_checksum_type if self.cut else file.checksum_type
        self.checksum = item.output_checksum if self.cut else file.checksum

    @classmethod
    def of_file(cls, file):
        return cls(file=file)


class Subscription(models.Model):
    """A standing filter; granules that match when they are archived are delivered once each.

    The footprint and window use the catalog's column names so the catalog's bbox query
    (rows whose box intersects a given box) selects subscriptions as well as granules. A
    subscription drawn as a shape keeps it in `geometry` and its box in the box columns: the
    box selects candidates, the shape is tested on them (see catalog.shapes).
    """

    ownership = Ownership("user")

    class Mode(models.TextChoices):
        NOTIFY = "notify", "Notify by email"
        PUSH = "push", "Push into a destination directory"
        ORDER = "order", "Add to a standing order (HTTPS links)"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="subscriptions")
    name = models.CharField(max_length=120)
    collections = models.ManyToManyField("catalog.Collection", through="SubscriptionCollection",
                                         related_name="+")
    west = models.FloatField(null=True, blank=True)
    south = models.FloatField(null=True, blank=True)
    east = models.FloatField(null=True, blank=True)
    north = models.FloatField(null=True, blank=True)
    geometry = models.TextField(
        null=True, blank=True,
        help_text="GeoJSON search shape (split at the antimeridian), bounded by the box above")
    temporal_start = models.DateTimeField(null=True, blank=True)
    temporal_end = models.DateTimeField(null=True, blank=True)
    conditions = models.JSONField(default=list, blank=True,
                                  help_text="[{name, op, value}] on granule attributes")
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.NOTIFY)
    destination = models.ForeignKey(Destination, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="subscriptions")
    new_versions = models.BooleanField(
        default=False, help_text="Also deliver new versions of granules that were reprocessed")
    subset = models.JSONField(
        default=dict, blank=True,
        help_text="What its standing order cuts out of each data file (distribution.subset)")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # a user tells their subscriptions apart by name, whatever its case
            models.UniqueConstraint(Lower("name"), "user", name="subscription_user_name_unique"),
        ]

    def __str__(self):
        return self.name

    @property
    def bbox(self):
        if None in (self.west, self.south, self.east, self.north):
            return None
        return [self.west, self.south, self.east, self.north]


class SubscriptionCollection(models.Model):
    """The precomputed index granules are matched against: a subscription's filter once per
    collection it names, so the rows a granule's collection selects hold all that is tested
    and no row of Subscription is read. services.subscriptions.save_subscription keeps the copy
    equal."""

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE)
    collection = models.ForeignKey("catalog.Collection", on_delete=models.CASCADE,
                                   related_name="+")
    active = models.BooleanField(default=True)
    west = models.FloatField(null=True, blank=True)
    south = models.FloatField(null=True, blank=True)
    east = models.FloatField(null=True, blank=True)
    north = models.FloatField(null=True, blank=True)
    geometry = models.TextField(
        null=True, blank=True,
        help_text="GeoJSON search shape (split at the antimeridian), bounded by the box above")
    temporal_start = models.DateTimeField(null=True, blank=True)
    temporal_end = models.DateTimeField(null=True, blank=True)
    conditions = models.JSONField(default=list, blank=True)
    new_versions = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subscription", "collection"],
                                    name="subscription_collection_unique"),
        ]

    def __str__(self):
        return f"{self.subscription_id} -> {self.collection_id}"


class SubscriptionIndexStamp(models.Model):
    """A token that changes with every write to a collection's SubscriptionCollection rows,
    set by database triggers (migration 0010), so that a process holding the collection's
    match table in memory (services.deliveries) knows when to read it again: whoever writes
    the rows (the API, a bulk load, a cascade from a deleted user), however. The token is
    new each time (a sequence on PostgreSQL, random on SQLite), never a counter that a rolled
    back change could give out twice."""

    collection_id = models.BigIntegerField(primary_key=True)
    token = models.BigIntegerField()

    def __str__(self):
        return f"{self.collection_id}: {self.token}"


class SubscriptionDelivery(models.Model):
    """One granule delivered for one subscription; the unique pair makes re-sends harmless."""

    ownership = Ownership("subscription__user")

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE,
                                     related_name="deliveries")
    granule = models.ForeignKey("catalog.Granule", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "granule"],
                                    name="subscription_delivery_unique"),
        ]
        indexes = [models.Index(fields=["state", "created_at"], name="delivery_state")]

    def __str__(self):
        return f"{self.subscription_id}: {self.granule_id} ({self.state})"


# the Tape REST API's stage requests live in a module of their own (this one stays short)
from .staging_models import StageFile, StageRequest  # noqa: E402, F401
