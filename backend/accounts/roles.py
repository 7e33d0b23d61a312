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
        names = set(user.groups.values_list("name", flat=True)) & set(GROUP_ROLES)
        if user.is_superuser:
            names.add(OPERATOR)
        known = user._granary_roles = frozenset(names or {USER})
    return set(known)


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
