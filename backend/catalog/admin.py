from django.contrib import admin

from .models import Collection, File, Granule


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["key", "title", "processing_level", "platform", "instrument", "access"]
    list_filter = ["access", "processing_level", "platform"]
    search_fields = ["short_name", "title"]
    filter_horizontal = ["approved_users"]


class FileInline(admin.TabularInline):
    model = File
    extra = 0


@admin.register(Granule)
class GranuleAdmin(admin.ModelAdmin):
    list_display = ["granule_id", "collection", "version", "state", "temporal_start", "total_size"]
    list_filter = ["state", "collection"]
    search_fields = ["granule_id"]
    date_hierarchy = "temporal_start"
    raw_id_fields = ["replaces"]
    inlines = [FileInline]


@admin.register(File)
class FileAdmin(admin.ModelAdmin):
    list_display = ["name", "granule", "role", "size", "checksum_type"]
    list_filter = ["role", "checksum_type"]
    search_fields = ["name"]
    raw_id_fields = ["granule"]
