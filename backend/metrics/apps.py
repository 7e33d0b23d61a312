from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "backend.metrics"
    label = "metrics"
