"""Notifications: the mail users get about their orders and subscriptions."""
from django.core.mail import send_mail
from django.db import transaction

from ..models import Delivery, Order
from .signed_links import links, site_url


def notify(user, subject, body, fail_silently=True):
    """Mail `user` (nothing when they have no address); the number of mails sent."""
    if not user.email:
        return 0
    return send_mail(subject, body, None, [user.email], fail_silently=fail_silently)


def notify_order(order):
    """Tell the user once their order is ready, ready in part, or failed (after the commit)."""
    if order.subscription_id:
        return
    listing = links(order)
    subject = {
        Order.State.READY: f"Granary order {order.pk} is ready",
        Order.State.PARTIALLY_READY: f"Granary order {order.pk} is ready in part",
        Order.State.FAILED: f"Granary order {order.pk} failed",
    }[order.state]
    lines = [subject + "."]
    if listing["links"]:
        how = ("They are being copied into your destination." if order.delivery == Delivery.PUSH
               else f"Download them by {order.expires_at:%Y-%m-%d %H:%M} UTC: "
                    f"{site_url()}api/v1/orders/{order.pk}/script/")
        lines.append(f"{len(listing['links'])} files are ready. {how}")
    for row in listing["failed"]:
        lines.append(f"Not available: {row['name']}: {row['error']}")
    transaction.on_commit(lambda: notify(order.user, subject, "\n".join(lines) + "\n"))


def notify_part(order, ready, later):
    """Tell the user a part of their order staged in parts is ready (after the commit)."""
    subject = f"Granary order {order.pk}: {ready} files ready, {later} to follow"
    if order.delivery == Delivery.PUSH:
        how = "They are being copied into your destination; the next part follows."
    else:
        how = ("Download them to have the next part recalled: "
               f"{site_url()}api/v1/orders/{order.pk}/script/")
    body = (f"Order {order.pk} is larger than its share of the cache, so it is staged in parts. "
            f"{ready} files are ready; {later} more are recalled as these are delivered.\n"
            f"{how}\n")
    transaction.on_commit(lambda: notify(order.user, subject, body))
