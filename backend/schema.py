"""What the OpenAPI schema says beyond the serializers' own flags (the web app's types come
from it, so a loose schema means loose types)."""
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class GranaryAutoSchema(AutoSchema):
    """A model serializer's answer carries every one of its fields, whatever the field's
    `required` says about input (a model default makes it optional there): the response
    component says so. Plain serializers keep their flags: theirs may leave keys out."""

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "response" and isinstance(serializer, serializers.ModelSerializer):
            schema["required"] = sorted(schema.get("properties", {}))
        return schema

