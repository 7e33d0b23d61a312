"""The Django admin opens every model's list for an operator."""
import pytest
from django.contrib import admin
from django.urls import reverse

from backend.accounts import roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_every_registered_model_list_opens(client):
    operator = UserFactory(role=roles.OPERATOR, is_staff=True, is_superuser=True)
    client.force_login(operator)
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert client.get(url).status_code == 200, url
