from rest_framework.routers import DefaultRouter

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("events", api.EventViewSet, basename="event")
router.register("event-endpoints", api.EndpointViewSet, basename="event-endpoint")

urlpatterns = router.urls
