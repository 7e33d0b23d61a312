from django.contrib import admin

from .models import IngestGranule, IngestRequest, Pdr


@admin.register(IngestRequest)
class IngestRequestAdmin(admin.ModelAdmin):
    list_display = ["id", "provider", "way", "label", "state", "granule_count", "archived_count",
                    "failed_count", "created_at", "finished_at"]
    list_filter = ["state", "way", "provider"]
    search_fields = ["label", "idempotency_key"]
    readonly_fields = ["body_hash", "created_at", "updated_at", "finished_at"]


@admin.register(IngestGranule)
class IngestGranuleAdmin(admin.ModelAdmin):
    list_display = ["id", "request", "position", "collection_key", "granule_id", "state",
                    "disposition", "attempts", "updated_at"]
    list_filter = ["state", "disposition"]
    search_fields = ["granule_id", "collection_key", "reason"]
    raw_id_fields = ["request", "catalog_granule"]


@admin.register(Pdr)
class PdrAdmin(admin.ModelAdmin):
    list_display = ["id", "provider", "name", "state", "disposition", "created_at"]
    list_filter = ["state", "provider"]
    search_fields = ["name", "detail"]
    raw_id_fields = ["request"]
