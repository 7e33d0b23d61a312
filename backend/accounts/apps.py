from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "backend.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"
