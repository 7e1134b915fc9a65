"""Sign-in lockout (django-axes) per username and address, and per address alone.

django-axes counts failed sign-ins (the admin's and the OAuth sign-in page's: both go through
`authenticate()`) for each combination in AXES_LOCKOUT_PARAMETERS, but compares all of them with one
limit. Trying many usernames from one address must be stopped too, yet a single person's five
typos must not lock out a whole office behind one address — so the address gets its own, higher
limit (LEV_LOGIN_FAILURE_LIMIT_PER_IP). This handler keeps axes' storage and flow and changes two
things only:

* the failure count it reports is the larger of the (username, address) count and the address's
  count scaled to the per-pair limit, so each reaches the lockout at its own limit;
* a successful sign-in clears only its own (username, address) failures — otherwise one valid
  account would wipe the address's count of failures for every other username.
"""

from __future__ import annotations

import ipaddress

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit
from django.conf import settings
from django.db.models import Sum

# The order of AXES_LOCKOUT_PARAMETERS this handler expects (lev/settings.py).
PAIR, ADDRESS = ["username", "ip_address"], "ip_address"


def _failures(attempts) -> int:
    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0


class LoginLockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials: dict | None = None) -> int:
        if settings.AXES_LOCKOUT_PARAMETERS != [PAIR, ADDRESS]:
            return super().get_failures(request, credentials)
        pair_attempts, address_attempts = self.get_user_attempts(request, credentials)
        pair_limit = get_failure_limit(request, credentials)
        address_limit = max(settings.LEV_LOGIN_FAILURE_LIMIT_PER_IP, pair_limit)
        return max(_failures(pair_attempts), _failures(address_attempts) * pair_limit // address_limit)

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        if settings.AXES_LOCKOUT_PARAMETERS != [PAIR, ADDRESS]:
            return super().reset_user_attempts(request, credentials)
        pair_attempts = self.filter_user_attempts(request, credentials)[0]
        count, _ = pair_attempts.delete()
        return count


def client_ip(request) -> str | None:
    """The address sign-in failures are counted for (AXES_CLIENT_IP_CALLABLE).

    REMOTE_ADDR, the peer of the connection — unless that peer is one of the reverse proxies named
    in LEV_TRUSTED_PROXIES: then the nearest address in X-Forwarded-For that is not one of them
    (read from the right, since only the proxies' own additions can be trusted). Behind a proxy that
    is not named there, every client shares the proxy's address, and the per-address limit would
    lock everyone out together: name it (docs/deployment.md).
    """
    peer = request.META.get("REMOTE_ADDR")
    trusted = _trusted_proxies()
    if not trusted or not _is_in(peer, trusted):
        return peer
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for address in reversed(forwarded):
        if not _valid(address):
            break  # a malformed entry: nothing left of it can be trusted
        if not _is_in(address, trusted):
            return address
    return peer


def _trusted_proxies() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(item, strict=False) for item in settings.LEV_TRUSTED_PROXIES]


def _valid(address: str) -> bool:
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return True


def _is_in(address: str | None, networks) -> bool:
    if not address or not _valid(address):
        return False
    ip = ipaddress.ip_address(address)
    return any(ip in network for network in networks)
