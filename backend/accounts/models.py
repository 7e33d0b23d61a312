"""Providers: the organisations that deliver products, and who may deliver what."""
from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class Provider(models.Model):
    """A data provider (a processing facility or science team) with its own staging area."""

    name = models.SlugField(max_length=64, unique=True, help_text="Short id, e.g. MODAPS")
    title = models.CharField(max_length=200, blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="providers", blank=True)
    collections = models.ManyToManyField(
        "catalog.Collection", related_name="providers", blank=True,
        help_text="Collections this provider may deliver",
    )
    contact_email = models.EmailField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def may_deliver(self, collection):
        return self.collections.filter(pk=collection.pk).exists()


class AuditEvent(models.Model):
    """Who did what to which object, when and why: the one record of operators' changes
    (configuration, granule withdrawal and deletion, bulk jobs). Kept when the object goes, so a
    deleted granule or collection still has its history."""

    at = models.DateTimeField(auto_now_add=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="audit_events")
    actor_name = models.CharField(max_length=150, blank=True,
                                  help_text="Kept as it was: the user may be renamed or removed")
    action = models.CharField(max_length=40, help_text="e.g. withdraw, delete, update")
    target_type = models.CharField(max_length=40, help_text="e.g. granule, collection, provider")
    target_id = models.CharField(max_length=64)
    target_label = models.CharField(max_length=300, blank=True)
    reason = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["target_type", "target_id", "at"], name="audit_target"),
            models.Index(fields=["at"], name="audit_at"),
        ]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name} {self.action} {self.target_label}"


class ApiToken(models.Model):
    """A personal API token: named, scoped, expiring and revocable. Only its SHA-256 is kept
    (the token is 256 random bits, so a fast hash is enough); the token itself is shown once."""

    SCOPES = ("read", "order", "ingest", "operate")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100)
    scopes = models.JSONField(default=list, help_text="Some of read, order, ingest, operate")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token")
    prefix = models.CharField(max_length=12, help_text="The token's first characters, to tell "
                                                       "tokens apart")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.user} / {self.name}"


class ExternalIdentity(models.Model):
    """A user as an OpenID provider knows it: matched by (issuer, subject), never by e-mail."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="external_identities")
    issuer = models.CharField(max_length=300)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"],
                                               name="external_identity_unique")]

    def __str__(self):
        return f"{self.issuer} {self.subject}"


class SignInRule(models.Model):
    """Operators' rule: a user whose claim (e.g. groups) holds a value gets a role, and may
    deliver for a provider. Checked at each single sign-on and for each provider bearer token."""

    claim = models.CharField(max_length=100, default="groups")
    value = models.CharField(max_length=200)
    role = models.CharField(max_length=20, choices=[(r, r) for r in ("user", "provider",
                                                                     "operator")])
    provider = models.ForeignKey(Provider, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="sign_in_rules")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.claim} has {self.value} -> {self.role}"


class SignedInSession(AbstractBaseSession):
    """A browser session with the id of its signed-in user beside the signed data, so one
    query reads the session, the user and the user's roles (accounts.sessions). The id in the
    data stays the authority: the column is only where the join starts."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.CASCADE, db_constraint=False,
                             related_name="+")

    @classmethod
    def get_session_store_class(cls):
        from .sessions import SessionStore

        return SessionStore
