from django.contrib import admin

from .models import Provider


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["name", "title", "contact_email", "created_at"]
    search_fields = ["name", "title"]
    filter_horizontal = ["members", "collections"]
