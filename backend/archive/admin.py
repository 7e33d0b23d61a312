from django.contrib import admin

from .models import (
    ArchivePolicy,
    ArchiveRequest,
    CacheEntry,
    Discrepancy,
    Drive,
    DriveModel,
    FileCopy,
    PolicyCopy,
    Reconciliation,
    Silo,
    Volume,
    VolumeGroup,
)


@admin.register(Silo)
class SiloAdmin(admin.ModelAdmin):
    list_display = ["name", "robot_exchange_s", "slots"]


@admin.register(DriveModel)
class DriveModelAdmin(admin.ModelAdmin):
    list_display = ["name", "rate_mb_s", "mount_s_min", "mount_s_max", "capacity_bytes"]


@admin.register(Drive)
class DriveAdmin(admin.ModelAdmin):
    list_display = ["name", "silo", "state", "mode", "mounted_volume", "consecutive_errors",
                    "offline_reason"]
    list_filter = ["silo", "state"]
    readonly_fields = ["lease_owner", "lease_until", "updated_at"]


@admin.register(VolumeGroup)
class VolumeGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "role", "silo"]


@admin.register(Volume)
class VolumeAdmin(admin.ModelAdmin):
    list_display = ["label", "silo", "group", "state", "percent_full", "live_bytes", "file_count",
                    "mount_count", "fault"]
    list_filter = ["state", "silo", "group"]
    search_fields = ["label"]


class PolicyCopyInline(admin.TabularInline):
    model = PolicyCopy
    extra = 0


@admin.register(ArchivePolicy)
class ArchivePolicyAdmin(admin.ModelAdmin):
    list_display = ["collection", "copies", "cache_residency_days"]
    inlines = [PolicyCopyInline]


@admin.register(FileCopy)
class FileCopyAdmin(admin.ModelAdmin):
    list_display = ["file", "copy_number", "segment", "volume", "position", "length", "state",
                    "verified_at"]
    list_filter = ["state", "copy_number"]
    raw_id_fields = ["file", "volume"]


@admin.register(CacheEntry)
class CacheEntryAdmin(admin.ModelAdmin):
    list_display = ["file", "state", "pinned", "size", "last_access", "keep_until"]
    list_filter = ["state", "pinned"]
    raw_id_fields = ["file"]


@admin.register(ArchiveRequest)
class ArchiveRequestAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "state", "priority", "file", "volume_group", "volume", "drive",
                    "percent_done", "attempts", "created_at"]
    list_filter = ["kind", "state", "priority"]
    raw_id_fields = ["file", "volume", "drive", "requested_by"]


class DiscrepancyInline(admin.TabularInline):
    model = Discrepancy
    extra = 0
    fields = ["kind", "file", "copy", "volume", "request", "detail", "repair", "repaired_at",
              "outcome"]
    raw_id_fields = ["file", "copy", "volume", "request"]


@admin.register(Reconciliation)
class ReconciliationAdmin(admin.ModelAdmin):
    list_display = ["id", "scope", "sample", "state", "created_at", "finished_at",
                    "discrepancy_count"]
    list_filter = ["scope", "state"]
    raw_id_fields = ["requested_by"]
    inlines = [DiscrepancyInline]
