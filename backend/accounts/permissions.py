"""DRF permissions by role."""
from rest_framework.permissions import BasePermission

from . import roles


class IsOperator(BasePermission):
    message = "This needs the operator role."

    def has_permission(self, request, view):
        return roles.is_operator(request.user)


class IsProvider(BasePermission):
    message = "This needs the provider role."

    def has_permission(self, request, view):
        return roles.has_role(request.user, roles.PROVIDER) or roles.is_operator(request.user)
