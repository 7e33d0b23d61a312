"""The audit trail: every operator change is recorded through `record`, in the transaction that
makes it, so a change and its record land together or not at all."""
from .models import AuditEvent


def record(actor, action, target_type, target_id, *, label="", reason="", detail=None):
    """Record that `actor` (a user, or None for the system) did `action` to a target."""
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        actor_name=getattr(actor, "username", "") or "system",
        action=action, target_type=target_type, target_id=str(target_id),
        target_label=str(label)[:300], reason=reason or "", detail=detail or {},
    )


def events_for(target_type, target_id):
    """A target's history, newest first."""
    return AuditEvent.objects.filter(target_type=target_type, target_id=str(target_id))
