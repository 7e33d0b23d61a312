"""Orders, subscriptions and deliveries; built out in the distribution issue."""
