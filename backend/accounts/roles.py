"""The roles of Granary. A role is a Django group; anonymous is the absence of a login."""

ANONYMOUS = "anonymous"
USER = "user"
PROVIDER = "provider"
OPERATOR = "operator"

GROUP_ROLES = (USER, PROVIDER, OPERATOR)
ALL_ROLES = (ANONYMOUS, *GROUP_ROLES)


def roles_of(user):
    """Every role a user holds; superusers are operators."""
    if user is None or not user.is_authenticated:
        return {ANONYMOUS}
    known = getattr(user, "_granary_roles", None)
    if known is None:
        # kept on the user object, which lives for one request: a view asks several times
        known = settle(user, user.groups.values_list("name", flat=True))
    return set(known)


def settle(user, group_names):
    """Keep on `user` the roles its groups `group_names` give (superusers are operators), as
    roles_of finds them; the roles kept."""
    names = set(group_names) & set(GROUP_ROLES)
    if user.is_superuser:
        names.add(OPERATOR)
    user._granary_roles = frozenset(names or {USER})
    return user._granary_roles


def prime(users):
    """Ask for the roles of many users at once (one query, not one per user), kept on each
    user object as roles_of keeps them."""
    from django.contrib.auth import get_user_model

    users = [u for u in users if u is not None and getattr(u, "_granary_roles", None) is None]
    held = {}
    for user_id, name in get_user_model().groups.through.objects.filter(
            user_id__in={u.pk for u in users}, group__name__in=GROUP_ROLES).values_list(
            "user_id", "group__name"):
        held.setdefault(user_id, set()).add(name)
    for user in users:
        settle(user, held.get(user.pk, ()))


def has_role(user, role):
    return role in roles_of(user)


def is_operator(user):
    return has_role(user, OPERATOR)


def primary_role(user):
    """The most capable role, for display."""
    held = roles_of(user)
    for role in (OPERATOR, PROVIDER, USER):
        if role in held:
            return role
    return ANONYMOUS

# least to most capable
RANK = (USER, PROVIDER, OPERATOR)
