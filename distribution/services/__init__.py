"""Distribution's services, a module per section: access, limits, cart, orders, signed_links,
downloads, destinations, push, subscriptions, deliveries, receivers, upkeep, notify and retries.

Exported here is what other apps use (the benchmarks order and match through production's
code); the distribution app itself imports from the modules.
"""
from .deliveries import matching_subscriptions
from .orders import create_order, refresh_order
from .retries import retry_deliveries, retry_items
from .signed_links import links
from .subscriptions import subscription_index

__all__ = ["create_order", "links", "matching_subscriptions", "refresh_order",
           "retry_deliveries", "retry_items", "subscription_index"]
