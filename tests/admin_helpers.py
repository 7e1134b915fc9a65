"""Driving Django admin pages through the test client as a browser would: read a change form's
current values (main form, inline management forms and inline forms) so a test changes only what
it names and posts the rest back unchanged."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client


def _post_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else ""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return str(value)


def _form_fields(form) -> dict[str, Any]:
    data = {}
    for bound in form:
        value = bound.value()
        if isinstance(value, bool) and not value:
            continue  # an unchecked checkbox is not sent
        data[bound.html_name] = _post_value(value)
    return data


def change_form_data(response) -> dict[str, Any]:
    """The POST body that would save the change page in `response` unchanged."""
    data = _form_fields(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(_form_fields(formset.management_form))
        for form in formset.forms:
            data.update(_form_fields(form))
    return data


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def superuser(username: str = "ops"):
    return get_user_model().objects.create_superuser(username, f"{username}@example.com", "unused-password")


def staff_user(username: str, *codenames: str):
    """A staff user (not a superuser) holding the named model permissions."""
    user = get_user_model().objects.create_user(username, f"{username}@example.com", "unused-password",
                                                is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user
