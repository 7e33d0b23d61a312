from django.urls import path

from . import api

urlpatterns = [
    path("me/", api.MeView.as_view(), name="me"),
    path("auth/login/", api.LoginView.as_view(), name="login"),
    path("auth/logout/", api.LogoutView.as_view(), name="logout"),
    path("auth/token/", api.TokenView.as_view(), name="token"),
]
