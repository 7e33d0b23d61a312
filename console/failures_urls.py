"""URLs of the failures API (groups, retry per group, dead letters, replay)."""
from django.urls import path

from . import failures_api as api

urlpatterns = [
    path("failures/groups/", api.FailureGroupsView.as_view(), name="console-failure-groups"),
    path("failures/groups/retry/", api.RetryGroupView.as_view(),
         name="console-failure-group-retry"),
    path("failures/groups/redeliver/", api.RedeliverGroupView.as_view(),
         name="console-failure-group-redeliver"),
    path("dead-letter/", api.DeadLetterView.as_view(), name="console-dead-letter"),
    path("dead-letter/replay/", api.ReplayView.as_view(), name="console-dead-letter-replay"),
]
