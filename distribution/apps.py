from django.apps import AppConfig


class DistributionConfig(AppConfig):
    name = "distribution"
