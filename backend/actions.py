"""What can be done about a failed or stuck thing, decided by the services that own it and listed
in the API as `actions`: each action possible or not, with why. Screens show what the server
offers instead of guessing, so a Retry that cannot succeed (a declared checksum of 000...0, a
cached copy that fails its checksum with no good copy) is never offered."""
from rest_framework import serializers

RETRY = "retry"
REPAIR = "repair"
REDELIVER = "redeliver"
NAMES = (RETRY, REPAIR, REDELIVER)


def can(action, reason=""):
    """`action` is possible; `reason` says what it will do."""
    return {"action": action, "possible": True, "reason": reason}


def cannot(action, reason):
    """`action` cannot succeed; `reason` says why (and what would)."""
    return {"action": action, "possible": False, "reason": reason}


def possible(actions, action):
    """Whether `actions` offer `action`."""
    return any(a["action"] == action and a["possible"] for a in actions)


class ActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=NAMES, help_text="retry: do the failed work again; repair: apply the repair; "
                                 "redeliver: the provider delivers the granule again")
    possible = serializers.BooleanField()
    reason = serializers.CharField(help_text="What it does, or why it cannot succeed")
