"""/.well-known/ documents distribution answers: the Tape REST API's discovery."""
from django.urls import path

from . import tape_api

urlpatterns = [
    path("wlcg-tape-rest-api", tape_api.DiscoveryView.as_view(), name="tape-discovery"),
]
