from django.urls import path

from . import api

urlpatterns = [
    path("demo/synthetic-history/", api.SyntheticHistoryView.as_view(),
         name="demo-synthetic-history"),
]
