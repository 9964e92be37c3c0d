"""The demo's single sign-on: Mirai Code signs its people in through an identity provider the demo starts itself
(the same ``oidc-provider`` the tests use, on loopback). ``run_demo`` starts it when Node.js and the installed
package are there and passes its issuer to ``seed_demo``; without them the provider record stays disabled and
the demo says so in one line. Its people, at the provider, are :data:`PEOPLE` (any password)."""
from __future__ import annotations

from pathlib import Path

from portal.core.sso import local_provider
from portal.core.sso.models import IdentityDomain, IdentityProvider

ORGANIZATION = "mirai-code"
DOMAIN = "mirai-code.example"
PROVIDER_NAME = "Mirai Code sign-in (demo)"
CLIENT_ID, CLIENT_SECRET = "geniac-portal-demo", "demo-client-secret-not-for-production"
# The provider's people, by the name they sign in with there (their address; any password).
PEOPLE = {
    f"ren.ito@{DOMAIN}": {"email": f"ren.ito@{DOMAIN}", "name": "Ren Ito"},
    f"yui.mori@{DOMAIN}": {"email": f"yui.mori@{DOMAIN}", "name": "Yui Mori"},
}


def plan(folder: Path, portal_port: int) -> tuple[list[str], str, str] | str:
    """What ``run_demo`` starts: the command, the provider's issuer and its discovery URL; or, when the provider
    cannot run here, the one line the demo prints instead."""
    reason = local_provider.missing()
    if reason:
        return (f"Single sign-on: {reason}, so the demo starts no identity provider; "
                "Mirai Code's people sign in with passwords.")
    config, _accounts = local_provider.write_config(
        folder, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, people=PEOPLE,
        portals=[f"http://127.0.0.1:{portal_port}", f"http://localhost:{portal_port}"])
    port = local_provider.free_port()
    return local_provider.command(port, config), local_provider.issuer(port), local_provider.discovery(port)


def seed(context: dict) -> None:
    """Register the demo provider as Mirai Code's, enabled only when ``run_demo`` started it (its issuer is in
    ``context["sso_issuer"]``). Passwords stay allowed: the demo keeps its password logins."""
    organization = context["organizations"][ORGANIZATION]
    issuer = context.get("sso_issuer") or ""
    provider, _ = IdentityProvider.objects.update_or_create(
        organization=organization, name=PROVIDER_NAME,
        defaults={"issuer": issuer or "http://127.0.0.1/", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                  "enabled": bool(issuer), "passwords_allowed": True})
    IdentityDomain.objects.get_or_create(provider=provider, domain=DOMAIN)
