"""Input read as its schema says, nothing quietly converted: DRF's CharField takes a number
(`"reason": 0` became "0"), its BooleanField takes 0 and 1, and a serializer given
a QueryDict reads `?limit=` as left out. Each of these was a 200 for a body or query that the
published schema calls invalid (schemathesis' negative_data_rejection)."""
from rest_framework import serializers


def refuse_numbers_for_text_and_truth():
    """Every CharField of the API (SlugField, EmailField ... too) takes no number, and every
    BooleanField no number either: DRF stored `"title": 0` as "0" and read `"active": 0` as
    false. Query parameters are strings, so only JSON bodies meet this. (A JSON body's
    "true" and "false" strings are still read as booleans.) Called once, when the accounts app
    is ready."""
    for field in (serializers.CharField, serializers.BooleanField):
        if not getattr(field, "refuses_numbers", False):
            field.to_internal_value = _refusing_numbers(field.to_internal_value)
            field.refuses_numbers = True


def _refusing_numbers(takes):
    def to_internal_value(self, data):
        if isinstance(data, int | float) and not isinstance(data, bool):
            self.fail("invalid")
        return takes(self, data)

    return to_internal_value


def read_form(serializer_class, data):
    """The validated data of query parameters or a body: a QueryDict as a plain dict first,
    because DRF reads one's empty value as left out (`?since=` listed everything where it
    should say that names no time)."""
    if hasattr(data, "dict"):
        data = data.dict()
    form = serializer_class(data=data if hasattr(data, "get") else {"": data})
    form.is_valid(raise_exception=True)
    return form.validated_data


class WholeNumberField(serializers.IntegerField):
    """A JSON whole number and nothing else: DRF's IntegerField takes "3", 3.0 and "3.0"."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)
