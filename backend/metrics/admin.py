from django.contrib import admin

from .models import QueueHeartbeat, TransferRecord


@admin.register(TransferRecord)
class TransferRecordAdmin(admin.ModelAdmin):
    list_display = ["direction", "collection", "bytes", "started_at", "ended_at"]
    list_filter = ["direction"]
    date_hierarchy = "ended_at"


@admin.register(QueueHeartbeat)
class QueueHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["queue", "worker", "sent_at", "seen_at"]
