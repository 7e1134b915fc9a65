"""The authorization server's pages and endpoints, on top of django-oauth-toolkit's views.

* `ConsentView` (/oauth/authorize/): sign-in with the site's users, then a server-rendered consent page
  naming the client, the scopes (each can be unticked) and, for a person in several accounts, the
  account the grant is for.
* `RegistrationView` (/oauth/register/): RFC 7591, open but rate-limited per client address and
  bounded (`lev.oauth.registration`).
* `ResourceMetadataView`: RFC 9728 metadata of the site and of /mcp.
* `connected_apps` (/oauth/connected-apps/): a person's grants, each revocable.
"""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from oauth2_provider import views as dot_views
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauth2_provider.views.metadata import OAuthProtectedResourceMetadataView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from lev import limits
from lev.accounts import scopes
from lev.accounts.models import Membership
from lev.oauth import selectors, services
from lev.oauth.registration import client_metadata_error, neutralise
from lev.resource import (
    PROTECTED_RESOURCE_METADATA_PATH,
    default_resource,
    endpoint_address,
    is_site_resource,
    public_origin,
)
from lev.throttling import count_in_window, parse_rate


class ConsentView(AuthorizationView):
    template_name = "oauth/authorize.html"

    def get(self, request, *args, **kwargs):
        # The person always sees the consent page: `approval_prompt=auto` (the toolkit's silent re-approval)
        # would grant without anyone choosing the account.
        if "approval_prompt" in request.GET:
            request.GET = request.GET.copy()
            request.GET.pop("approval_prompt")
        return super().get(request, *args, **kwargs)

    def validate_authorization_request(self, request):
        scopes_, credentials = super().validate_authorization_request(request)
        # RFC 8707: a token for anything but this site would be useless here and is refused up front.
        for value in request.GET.getlist("resource"):
            if not is_site_resource(value, request):
                raise OAuthToolkitError(
                    error=CustomOAuth2Error(
                        error="invalid_target", state=credentials.get("state"),
                        description=f"This server issues tokens only for {default_resource(request)}.",
                    ),
                    redirect_uri=credentials.get("redirect_uri"),
                )
        return scopes_, credentials

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        requested = set(context.get("scopes") or [])
        # What is always granted (scopes.ALWAYS_GRANTED: seeing who you are) is said, not offered as a choice.
        context["scope_choices"] = [(name, text) for name, text in scopes.CHOOSABLE.items() if name in requested]
        context["always_granted"] = [(name, scopes.SCOPES[name]) for name in sorted(scopes.ALWAYS_GRANTED)]
        context["memberships"] = list(
            Membership.objects.filter(user=self.request.user).select_related("account").order_by("account__name")
        )
        if application is not None:
            context["client_title"] = neutralise(application.name)
            context["client_host"] = urlsplit(application.client_id).hostname \
                if application.client_id.startswith("https://") else None
            context["redirect_host"] = urlsplit(context.get("redirect_uri") or "").hostname
        return context

    def form_valid(self, form):
        # The consent page posts the client it was shown for; a post naming any other (a forged or stale
        # form) is refused like an incomplete one, before the toolkit looks the client up (a 500 there).
        if not get_application_model().objects.filter(client_id=form.cleaned_data.get("client_id") or "").exists():
            return self._refused("This app is not registered here. Start connecting again from the app.")
        requested = scopes.known(form.cleaned_data.get("scope", ""))
        chosen = frozenset(self.request.POST.getlist("scope_choice")) & requested - scopes.ALWAYS_GRANTED
        membership = None
        account = self.request.POST.get("account", "")
        if account.isdigit() and len(account) < 20:
            membership = Membership.objects.filter(user=self.request.user, account_id=int(account)).first()
        if form.cleaned_data.get("allow"):
            if not chosen and requested - scopes.ALWAYS_GRANTED:
                return self._refused("Choose at least one permission to allow, or choose Deny.")
            if membership is None:
                return self._refused("Choose one of your accounts for this connection.")
            # An app that asked only for what every connection has gets just that.
            form.cleaned_data["scope"] = scopes.as_text(chosen or requested & scopes.ALWAYS_GRANTED)
        self.account_id = membership.account_id if membership else None
        return super().form_valid(form)

    def form_invalid(self, form):
        # Only a tampered or truncated form gets here (the page always posts its hidden fields).
        return self._refused("The authorization request is incomplete. Start connecting again from the app.")

    def create_authorization_response(self, request, scopes, credentials, allow):
        # The validator keeps the chosen account with the code (lev.oauth.validators).
        credentials["lev_account_id"] = getattr(self, "account_id", None)
        return super().create_authorization_response(request, scopes, credentials, allow)

    def _refused(self, message: str) -> HttpResponse:
        return render(self.request, self.template_name,
                      {"error": {"error": "Nothing was allowed", "description": message}}, status=400)


class SignInView(auth_views.LoginView):
    """The site's sign-in page. Reached on the way to the consent page, it names the app asking (its
    registered name, or the host of a client that identifies itself by URL), so the person knows why
    they sign in before they type a password."""

    template_name = "oauth/login.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        target = urlsplit(context.get("next") or "")
        if not target.netloc and target.path == reverse("oauth2_provider:authorize"):
            client_id = (parse_qs(target.query).get("client_id") or [""])[0][:limits.OAUTH_CLIENT_ID_MAX]
            application = get_application_model().objects.filter(client_id=client_id).first() if client_id else None
            if application is not None and application.name:
                context["client_title"] = neutralise(application.name)
            elif client_id.startswith("https://"):
                context["client_title"] = neutralise(urlsplit(client_id).hostname or "")
        return context


class TokenView(dot_views.TokenView):
    """The token endpoint. oauthlib's error for a refusal raised while the token is saved (e.g. the
    `invalid_target` of a resource that is not the code's) comes without its Content-Type: it is JSON
    (RFC 6749 §5.2), and says so."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        if response.status_code >= 400 and not response.get("Content-Type", "").startswith("application/json"):
            response["Content-Type"] = "application/json"
            response["Cache-Control"] = "no-store"
        return response


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"


class JsonMethodNotAllowed:
    """A method the endpoint does not take is an RFC 7591-style JSON error too, not an empty 405."""

    def http_method_not_allowed(self, request, *args, **kwargs):
        response = _registration_error("invalid_request", f"{request.method} is not allowed here.", status=405)
        # The methods this view answers (View.http_method_names it defines a handler for).
        response["Allow"] = ", ".join(m.upper() for m in self.http_method_names if hasattr(self, m))
        return response


class RegistrationView(JsonMethodNotAllowed, DynamicClientRegistrationView):
    """RFC 7591 registration: open (a client that connects by URL has no one to ask), so bounded: a
    rate per client address (LEV_OAUTH_REGISTRATION_RATE), a body size, and the metadata limits of
    `lev.oauth.registration`. Answers are RFC 7591 JSON, never a page or a 500."""

    def post(self, request, *args, **kwargs):
        limit, period = parse_rate(settings.LEV_OAUTH_REGISTRATION_RATE)
        window = int(time.time() // period)
        if count_in_window(f"oauth-register:{client_address(request)}:{window}", period) > limit:
            response = _registration_error("rate_limited", "Too many client registrations from this address; "
                                           "retry later.", status=429)
            response["Retry-After"] = str(max(1, int((window + 1) * period - time.time())))
            return response
        refused = _oversized(request) or _metadata_refused(request)
        if refused:
            return refused
        return super().post(request, *args, **kwargs)


class ClientConfigurationView(JsonMethodNotAllowed, DynamicClientRegistrationManagementView):
    """RFC 7592 client configuration (`/oauth/register/<client_id>/`, with the registration access token
    the registration answered): read, update, delete. An update meets exactly the rules of a registration
    (`lev.oauth.registration`, the same body size) and may not change how the client authenticates."""

    def put(self, request, client_id, *args, **kwargs):
        refused = _oversized(request)
        if refused:
            return refused
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        refused = _metadata_refused(request)
        if refused:
            return refused
        data = json.loads(request.body)
        if data.get("client_id", client_id) != client_id:
            return _registration_error("invalid_client_metadata", "client_id must be this client's.")
        method = data.get("token_endpoint_auth_method", "client_secret_basic")
        if (method == "none") != (auth.application.client_type == auth.application.CLIENT_PUBLIC):
            return _registration_error("invalid_client_metadata", "token_endpoint_auth_method cannot change; "
                                       "register a new client instead.")
        return super().put(request, client_id, *args, **kwargs)


def _oversized(request: HttpRequest) -> JsonResponse | None:
    """413 for a body past the registration bound, before it is read (Django reads no more than
    Content-Length, so a body without one is empty and refused as not JSON)."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > limits.OAUTH_REGISTRATION_BODY_MAX_BYTES:
        return _registration_error("invalid_client_metadata", "The registration request is larger than "
                                   f"{limits.OAUTH_REGISTRATION_BODY_MAX_BYTES} bytes.", status=413)
    return None


def _metadata_refused(request: HttpRequest) -> JsonResponse | None:
    try:
        data = json.loads(request.body)
    except (ValueError, RecursionError):
        return _registration_error("invalid_client_metadata", "The request body must be a JSON object.")
    error = client_metadata_error(data)
    if error:
        return _registration_error(*error)
    return None


def _registration_error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


class ResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728: `/.well-known/oauth-protected-resource` describes the whole site (REST API included), and
    the same path with a protected endpoint's address inserted (`…/mcp`, `…/mcp/x/deals`) that endpoint
    (lev.endpoints); any other address inserted is no resource of this site: 404."""

    def dispatch(self, request, *args, **kwargs):
        address = kwargs.get("address")
        if address is not None and not endpoint_address("/" + address):
            raise Http404
        return super().dispatch(request)

    def get_resource(self, request):
        # The address the well-known path was inserted into (RFC 9728 §3): an endpoint, or one under it.
        inserted = request.path[len(PROTECTED_RESOURCE_METADATA_PATH):].rstrip("/")
        return public_origin(request) + (inserted if endpoint_address(inserted) else "")

    def get_authorization_servers(self, request):
        return [public_origin(request)]

    def get_scopes_supported(self):
        return list(scopes.SCOPES)

    def get_resource_name(self):
        return "Lev MCP"


@login_required
@require_http_methods(["GET", "POST"])
def connected_apps(request: HttpRequest) -> HttpResponse:
    """The person's connected apps: one row per app and account, however many times the app was
    connected there (each sign-in of a client is a grant); POST `revoke=<id>` disconnects that app
    from that account at once (every grant of it)."""
    if request.method == "POST":
        value = request.POST.get("revoke", "")
        authorization = selectors.connected_app_get(user=request.user, authorization_id=value)
        if authorization is None:
            raise Http404
        for grant in selectors.connected_app_grants(authorization=authorization):
            services.authorization_revoke(authorization=grant)
        return redirect("oauth-connected-apps")
    Application = get_application_model()
    rows: dict[tuple[int, int], dict] = {}
    for item in selectors.connected_apps(user=request.user):  # newest first: a row is its latest grant
        row = rows.setdefault((item.application_id, item.account_id), {
            "authorization": item, "times": 0, "first_connected_at": item.created_at, "last_used_at": None,
            "scopes": set(), "cimd": item.application.registration_source == Application.RegistrationSource.CIMD})
        row["times"] += 1
        row["first_connected_at"] = item.created_at
        row["scopes"].update(item.scope.split())
        if item.last_used_at and (row["last_used_at"] is None or item.last_used_at > row["last_used_at"]):
            row["last_used_at"] = item.last_used_at
    for row in rows.values():
        granted = row.pop("scopes")
        row["scope_texts"] = [text for name, text in scopes.SCOPES.items() if name in granted]
    return render(request, "oauth/connected_apps.html", {"apps": list(rows.values())})
