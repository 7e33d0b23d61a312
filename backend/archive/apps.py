from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "backend.archive"
    label = "archive"
