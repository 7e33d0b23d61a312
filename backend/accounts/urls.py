from django.urls import path

import backend.ids  # noqa: F401 - registers the <id:...> path converter

from . import api, config_api, sso

urlpatterns = [
    path("me/", api.MeView.as_view(), name="me"),
    path("auth/login/", api.LoginView.as_view(), name="login"),
    path("auth/logout/", api.LogoutView.as_view(), name="logout"),
    path("auth/token/", api.TokenView.as_view(), name="token"),
    path("auth/tokens/", api.TokenListView.as_view(), name="token-list"),
    path("auth/tokens/<id:pk>/", api.TokenDetailView.as_view(), name="token-detail"),
    path("auth/methods/", api.AuthMethodsView.as_view(), name="auth-methods"),
    path("auth/oidc/login/", sso.sign_in, name="oidc-login"),
    path("auth/oidc/callback/", sso.callback, name="oidc-callback"),
    path("config/providers/", config_api.ProviderListView.as_view(), name="config-provider-list"),
    path("config/providers/<str:provider>/", config_api.ProviderDetailView.as_view(),
         name="config-provider-detail"),
    path("config/users/", config_api.UserListView.as_view(), name="config-user-list"),
    path("config/users/<id:pk>/", config_api.UserDetailView.as_view(),
         name="config-user-detail"),
    path("config/sign-in-rules/", config_api.SignInRuleListView.as_view(),
         name="config-sign-in-rule-list"),
    path("config/sign-in-rules/<id:pk>/", config_api.SignInRuleDetailView.as_view(),
         name="config-sign-in-rule-detail"),
    path("config/audit/", config_api.AuditLogView.as_view(), name="config-audit"),
]
