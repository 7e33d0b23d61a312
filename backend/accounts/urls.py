from django.urls import path

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api, config_api

urlpatterns = [
    path("me/", api.MeView.as_view(), name="me"),
    path("auth/login/", api.LoginView.as_view(), name="login"),
    path("auth/logout/", api.LogoutView.as_view(), name="logout"),
    path("auth/token/", api.TokenView.as_view(), name="token"),
    path("config/providers/", config_api.ProviderListView.as_view(), name="config-provider-list"),
    path("config/providers/<str:provider>/", config_api.ProviderDetailView.as_view(),
         name="config-provider-detail"),
    path("config/users/", config_api.UserListView.as_view(), name="config-user-list"),
    path("config/users/<id:pk>/", config_api.UserDetailView.as_view(),
         name="config-user-detail"),
    path("config/audit/", config_api.AuditLogView.as_view(), name="config-audit"),
]
