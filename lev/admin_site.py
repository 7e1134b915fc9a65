"""The admin site: "Lev" instead of "Django administration", the apps grouped for the people who use
them, and a home page the feature apps fill in (a seam: `lev` names no app above it).

* The deal team's sections come first, in the order the app registers them from its `ready()`
  (`register_sections`: a section's name and the models it holds, by "app_label.ModelName").
* The site's operations tables (the apps below, all of `lev` or third-party) are one "Operations"
  section, shown to superusers only. An account admin (a member with the owner role) who is not a
  superuser sees a smaller "Your account" section instead: its account and people, API keys and
  connected apps — what it runs for its own team. Everyone else on the deal team sees neither.
  Hiding a section changes no permission: each page still answers whoever its admin lets in.
* The home page (`register_home`): a read the app gives the request to, and the template it fills.
* What people typed is shown as it reads: every page the site serves (each view goes through
  `admin_view`) and its autocomplete answers leave out the bidirectional and other invisible format
  characters (`lev.invisible`), so a U+202E in a note, a description or a term sheet cannot reorder what
  a reader sees. A form that shows such a text shows it without them, so saving it stores it without them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import admin
from django.contrib.admin.views.autocomplete import AutocompleteJsonView
from django.http import HttpRequest, HttpResponse
from django.template.response import SimpleTemplateResponse

from lev.accounts.admin_bases import staff_roles
from lev.accounts.models import Membership
from lev.invisible import without_invisible, without_invisible_utf8

# The site's operations: lev's own apps and the third-party ones it runs on.
OPERATIONS_APPS = ("accounts", "auth", "oauth", "oauth2_provider", "axes", "idempotency")
OPERATIONS = "Operations"
# What an account's owner runs for its own team (each list is kept to its accounts by its admin).
ACCOUNT_SETTINGS = "Your account"
ACCOUNT_SETTINGS_MODELS = ("accounts.Account", "auth.User", "accounts.ApiKey", "oauth.OAuthAuthorization")

_sections: list[tuple[str, tuple[str, ...]]] = []
_home: dict[str, Any] = {}


def register_sections(sections: Iterable[tuple[str, Iterable[str]]]) -> None:
    """The deal team's sections of the app list, first to last: (name, ["app_label.ModelName", …])."""
    _sections[:] = [(name, tuple(models)) for name, models in sections]


def register_home(read: Callable[[HttpRequest], dict[str, Any]], template: str) -> None:
    """The home page: `read(request)` gives the template's context (called once per visit)."""
    _home.update(read=read, template=template)


def _key(model: dict) -> str:
    return model["model"]._meta.label


def _section(name: str, models: list[dict], app_label: str, app_url: str) -> dict:
    return {"name": name, "app_label": app_label, "app_url": app_url, "has_module_perms": True,
            "models": models}


def grouped(app_list: list[dict], *, superuser: bool, owner: bool) -> list[dict]:
    """The apps of Django's list as the sections the person sees (see the module docstring)."""
    models = {_key(model): (app, model) for app in app_list for model in app["models"]}
    taken: set[str] = set()
    sections = []
    for name, keys in _sections:
        found = [models[key] for key in keys if key in models]
        if found:
            taken.update(_key(model) for _app, model in found)
            # A section's heading leads to its first list (not to the app's page, which lists every model
            # of the app), and is marked as the current one on that list's pages.
            app, first = found[0]
            sections.append(_section(name, [model for _app, model in found], app["app_label"],
                                     first["admin_url"] or app["app_url"]))
    # A model registered by an app but named in no section still shows, after the sections.
    for app in app_list:
        rest = [m for m in app["models"] if _key(m) not in taken and app["app_label"] not in OPERATIONS_APPS]
        if rest:
            sections.append({**app, "models": rest})
    operations = [m for app in app_list if app["app_label"] in OPERATIONS_APPS for m in app["models"]]
    if superuser and operations:
        sections.append(_section(OPERATIONS, operations, "operations", operations[0]["admin_url"] or ""))
    elif owner:
        mine = [models[key][1] for key in ACCOUNT_SETTINGS_MODELS if key in models]
        if mine:
            sections.append(_section(ACCOUNT_SETTINGS, mine, "account_settings", mine[0]["admin_url"] or ""))
    return sections


def _neutralised(response: HttpResponse) -> HttpResponse:
    """An HTML page without the invisible format characters (a template response once it is rendered)."""
    if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
        response.add_post_render_callback(_neutralised)
    elif not response.streaming and response.get("Content-Type", "").startswith("text/html") \
            and response.charset.lower().replace("-", "") == "utf8":
        response.content = without_invisible_utf8(response.content)
    return response


def shown_as_it_reads(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """`view` whose HTML pages leave out the invisible format characters (lev.invisible)."""

    @functools.wraps(view)
    def inner(request, *args, **kwargs):
        return _neutralised(view(request, *args, **kwargs))

    return inner


class AutocompleteWithoutInvisible(AutocompleteJsonView):
    """The admin's autocomplete, each choice's text without the invisible format characters."""

    def serialize_result(self, obj, to_field_name):
        result = super().serialize_result(obj, to_field_name)
        return {**result, "text": without_invisible(str(result["text"]))}


class LevAdminSite(admin.AdminSite):
    site_header = "Lev"
    site_title = "Lev"
    index_title = "Your deals today"

    def get_app_list(self, request, app_label=None):
        app_list = super().get_app_list(request, app_label)
        if app_label is not None:  # one app's own page (/admin/accounts/): as Django lists it
            return app_list
        superuser = request.user.is_superuser
        owner = not superuser and Membership.Role.OWNER in staff_roles(request).values()
        return grouped(app_list, superuser=superuser, owner=owner)

    def admin_view(self, view, cacheable=False):
        return super().admin_view(shown_as_it_reads(view), cacheable)

    def autocomplete_view(self, request):
        return AutocompleteWithoutInvisible.as_view(admin_site=self)(request)

    @property
    def index_template(self) -> str | None:
        return _home.get("template")

    def index(self, request, extra_context=None):
        if _home:
            extra_context = {**_home["read"](request), **(extra_context or {})}
        return super().index(request, extra_context)
