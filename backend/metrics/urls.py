from django.urls import path

from . import api

urlpatterns = [
    path("metrics/today/", api.TodayView.as_view(), name="metrics-today"),
    path("metrics/daily/", api.DailyView.as_view(), name="metrics-daily"),
    path("metrics/throughput/", api.ThroughputView.as_view(), name="metrics-throughput"),
    path("metrics/targets/", api.TargetsView.as_view(), name="metrics-targets"),
]
