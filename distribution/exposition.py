"""Distribution's Prometheus figures: orders, their items and subscription deliveries by
state (registered from DistributionConfig.ready)."""
from backend.metrics.exposition import gauge, states

from .models import Order, OrderItem, SubscriptionDelivery


def collect():
    yield gauge("granary_orders", "Orders by state", ["state"], states(Order))
    yield gauge("granary_order_items", "Order items (files) by state", ["state"],
                states(OrderItem))
    yield gauge("granary_subscription_deliveries", "Subscription deliveries by state",
                ["state"], states(SubscriptionDelivery))
