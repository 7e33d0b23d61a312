"""The events app's public interface: other apps emit events and read the dead letters here."""
from .endpoints import choices, create, replay, rotate, send_test, update
from .fanout import fan_out, fan_out_missed
from .lane_checks import forget_slow, stale_slow, stuck, unstick
from .lanes import deliver, due_lanes, wake_due
from .outbox import (
    OPERATOR_TYPES,
    TYPES,
    emit,
    emit_many,
    event,
    granule_event,
    link,
    purge_expired,
)


def sweep():
    """Fan out what was missed, wake lanes with due work, drop events past retention."""
    return {"fanned": fan_out_missed(), "woken": len(wake_due()), "purged": purge_expired()}


def drain():
    """Fan out and deliver everything due, here and now (the command line, tests); how many
    deliveries were made."""
    fan_out_missed()
    done = 0
    while True:
        lanes = due_lanes()
        sent = sum(deliver(lane) for lane in lanes)
        done += sent
        if not sent:
            return done


__all__ = ["OPERATOR_TYPES", "TYPES", "choices", "create", "deliver", "drain", "due_lanes", "emit",
           "emit_many", "event", "fan_out", "fan_out_missed", "forget_slow", "granule_event",
           "link", "purge_expired", "replay", "rotate", "send_test", "stale_slow", "stuck",
           "sweep", "unstick", "update", "wake_due"]
