from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "backend.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self):
        from backend.fields import refuse_numbers_for_text_and_truth

        refuse_numbers_for_text_and_truth()
