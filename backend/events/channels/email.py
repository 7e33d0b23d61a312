"""The mail channel: a message rendered from the event (its type picks the wording, its data
fills in ids and links) to the endpoint owner's address."""
from django.core.mail import send_mail

SUBJECTS = {
    "order.ready": "Granary order {order} is ready",
    "order.partially_ready": "Granary order {order} is ready in part",
    "order.failed": "Granary order {order} failed",
    "order.part_ready": "Granary order {order}: {ready} files ready, {later} to follow",
    "order.delivered": "Granary order {order}: {files} files delivered",
    "order.expiring": "Granary order {order} expires soon",
    "subscription.matched": "Granary subscription {subscription}: {granule_name}",
}
LINES = {
    "order.ready": ("{files} files are ready.", "Files: {links[files]}"),
    "order.partially_ready": ("{files} files are ready, {failed} are not available.",
                              "Files: {links[files]}"),
    "order.failed": ("None of its files could be made ready.", "Details: {links[order]}"),
    "order.part_ready": ("The order is larger than its share of the cache, so it is staged "
                         "in parts: {ready} files are ready; {later} more are recalled as "
                         "these are delivered.", "Files: {links[files]}"),
    "order.delivered": ("Its files were copied into your destination.",
                        "Details: {links[order]}"),
    "order.expiring": ("Its files can be downloaded until {expires_at} UTC.",
                       "Files: {links[files]}"),
    "subscription.matched": ("A new granule matched your subscription and was delivered.",
                             "Granule: {links[granule]}"),
}


class _Blank(dict):
    def __missing__(self, key):
        return "?"


def render(event):
    """(subject, body) of the mail telling of `event`."""
    data = _Blank(event.data)
    data["links"] = _Blank(event.data.get("links") or {})
    subject = SUBJECTS.get(event.type, "Granary: {type}").format_map(
        _Blank(data, type=event.type))
    lines = [line.format_map(data) for line in LINES.get(event.type, ())]
    lines.append(f"Event {event.uid} ({event.type}, {event.time:%Y-%m-%d %H:%M} UTC).")
    return subject, "\n".join(lines) + "\n"


def send(endpoint, event):
    if not endpoint.user.email:
        return None
    subject, body = render(event)
    send_mail(subject, body, None, [endpoint.user.email], fail_silently=False)
    return None
