"""The console's API under /api/v1/console/."""
urlpatterns = []
