"""Ownership, one rule for every object a user can name: it is reached through its owner.

A model that users own declares `ownership = Ownership(path, operators=...)`: `path` leads
from a row to the user who owns it (`"user"`, `"order__user"`) or to the provider whose members
own it (`"provider"`). `owned(queryset, user)` is the only filter views and services use to
fetch such rows, so no view checks ownership its own way; an operator's wider scope is declared
on the model (`operators=True`: operators reach every row) rather than decided view by view.
Reaching a row through its owner never makes the caller its owner: what saves a row keeps the
owner it has (an operator pausing a user's subscription leaves it the user's).
"""
from dataclasses import dataclass

from django.db.models import Q

from backend.errors import NotFound

from . import roles


@dataclass(frozen=True)
class Ownership:
    """How a model's rows lead to their owner, and whether operators reach all of them."""

    path: str = "user"
    by_provider: bool = False
    operators: bool = True
    # further paths to a user who reaches the row too (an event reaches its user and the
    # members of its provider)
    also: tuple = ()

    def mine(self, user):
        """The filter selecting the rows `user` owns."""
        found = Q(**{f"{self.path}__members" if self.by_provider else self.path: user})
        for path in self.also:
            found |= Q(**{path: user})
        return found


def ownership_of(model):
    found = getattr(model, "ownership", None)
    if not isinstance(found, Ownership):
        raise TypeError(f"{model.__name__} declares no ownership")
    return found


def owned(queryset, user):
    """The rows of `queryset` that `user` may reach: their own, or every row where the model
    lets operators reach them all; none for anonymous callers."""
    queryset = queryset.all()
    rule = ownership_of(queryset.model)
    if user is None or not user.is_authenticated:
        return queryset.none()
    if rule.operators and roles.is_operator(user):
        return queryset
    return queryset.filter(rule.mine(user))


def get_owned(queryset, user, pk, noun=None):
    """The row `pk` of `queryset` that `user` may reach, or a 404 that says so.

    Another's row answers exactly as a missing one: a 404 never tells whether it exists.
    """
    return _one(owned(queryset, user), pk, noun)


def _one(reachable, pk, noun):
    found = reachable.filter(pk=pk).first()
    if found is None:
        raise NotFound(f"There is no {noun or reachable.model._meta.verbose_name} {pk} "
                       "of yours.")
    return found


class OwnedViewMixin:
    """A DRF view over rows users own: `owned_queryset()` gives every row (with its joins),
    the mixin narrows it to the caller's reach and fetches one by its lookup through it."""

    noun = None

    def owned_queryset(self):
        raise NotImplementedError

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return self.owned_queryset().none()
        return owned(self.owned_queryset(), self.request.user)

    def get_object(self):
        lookup = self.lookup_url_kwarg or self.lookup_field
        found = _one(self.get_queryset(), self.kwargs[lookup], self.noun)
        self.check_object_permissions(self.request, found)
        return found
