"""Registering an organization's identity provider: the discovery check made on save, the history of each save,
and the designation of the organization's administrators, who may register it themselves.

The discovery check is a real request to ``<issuer>/.well-known/openid-configuration`` through the portal's one
client for user-given URLs (``portal.core.outbound``: https, no private addresses unless the operator lists the host,
no redirects), and the answer must be an OpenID Connect discovery document for that very issuer, offering the
authorization code flow. A disabled provider is saved without the check (one may switch off a provider that no
longer answers).
"""
from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext

from portal.core import access, outbound
from portal.core.audit.models import AuditKind
from portal.core.audit.recording import record
from portal.core.choices import MembershipRole
from portal.core.models import Membership
from portal.core.sso import saml
from portal.core.sso.models import IdentityProvider, IdentityProviderChange

WELL_KNOWN = "/.well-known/openid-configuration"
REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")
# The fields a save's history shows (the secret only as "changed"; the domains as one sorted list).
TRACKED = ("organization_id", "name", "protocol", "issuer", "client_id", "saml_entity_id", "saml_sso_url", "enabled",
           "passwords_allowed")
SECRET_CHANGED = "changed"


class DiscoveryFailed(Exception):
    """The issuer's discovery document could not be read or is not one; the message is the portal's own words."""


def discovery_url(issuer: str) -> str:
    return f"{issuer.rstrip('/')}{WELL_KNOWN}"


def check_discovery(issuer: str) -> dict:
    """Read the issuer's discovery document and check that it is one for this issuer, or :class:`DiscoveryFailed`."""
    url = discovery_url(issuer)
    try:
        answer = outbound.request("GET", url, headers={"Accept": "application/json"}, timeout=10,
                                  max_bytes=512 * 1024)
    except outbound.OutboundError as exc:
        raise DiscoveryFailed(gettext("The portal could not read %(url)s: %(reason)s")
                              % {"url": url, "reason": exc.reason}) from None
    if answer.status != 200:
        raise DiscoveryFailed(gettext("%(url)s did not answer with a discovery document: %(reason)s")
                              % {"url": url, "reason": outbound.describe_status(answer.status)})
    try:
        document = answer.json()
    except outbound.OutboundError:
        document = None
    if not isinstance(document, dict):
        raise DiscoveryFailed(gettext("%(url)s did not answer with JSON: it is not an OpenID Connect discovery "
                                      "document.") % {"url": url})
    said = str(document.get("issuer") or "")
    if said.rstrip("/") != issuer.rstrip("/"):
        raise DiscoveryFailed(gettext("The discovery document names another issuer (%(said)s): give the issuer "
                                      "exactly as the provider names itself.") % {"said": said or "none"})
    missing = [name for name in REQUIRED if not isinstance(document.get(name), str) or not document.get(name)]
    if missing:
        raise DiscoveryFailed(gettext("The discovery document lacks %(fields)s.") % {"fields": ", ".join(missing)})
    types = document.get("response_types_supported") or []
    if isinstance(types, list) and types and "code" not in types:
        raise DiscoveryFailed(gettext("The provider does not offer the authorization code flow, which the portal "
                                      "signs in with."))
    return document


def snapshot(provider: IdentityProvider | None) -> dict:
    """What a save's history compares: the tracked fields, the domains and the secret as stored."""
    if provider is None or provider.pk is None:
        return {}
    values = {name: getattr(provider, name) for name in TRACKED}
    values["domains"] = sorted(provider.domains.values_list("domain", flat=True))
    values["client_secret"] = provider.client_secret
    values["saml_certificate"] = saml.fingerprint(provider.saml_certificate)  # the fingerprint, not the PEM
    return values


def record_change(provider: IdentityProvider, before: dict, request) -> IdentityProviderChange | None:
    """Write the history row and the audit event of one save (nothing when nothing changed)."""
    after = snapshot(provider)
    changes = {}
    for name, value in after.items():
        old = before.get(name)
        if name == "client_secret":
            if before and old != value:
                changes[name] = ["", SECRET_CHANGED]
        elif not before or old != value:
            changes[name] = [old, value]
    if before and not changes:
        return None
    if not before:
        action = "registered"
    elif "enabled" in changes and len(changes) == 1:
        action = "enabled" if provider.enabled else "disabled"
    else:
        action = "changed"
    user = request.user
    row = IdentityProviderChange.objects.create(provider=provider, actor=user, actor_name=user.get_username(),
                                                action=action, changes=changes)
    record(AuditKind.IDENTITY_PROVIDER, request=request, organization_id=provider.organization_id,
           method=provider.method,
           target=f"{provider.issuer or provider.saml_entity_id} ({', '.join(sorted(changes))})"[:500],
           outcome=action)
    return row


# --- the organization's administrators ---------------------------------------------------------------------

class DesignationRefused(Exception):
    """The person cannot be designated; the message says why."""


def administrators():
    """Every designation (rows of ``Membership`` with the administrator role)."""
    return Membership.objects.filter(role=MembershipRole.ORG_ADMIN)


def designate(organization, person, request) -> Membership:
    """Make ``person`` (a customer of ``organization``) its administrator, recorded."""
    if not Membership.objects.filter(user=person, organization=organization, role=MembershipRole.CUSTOMER).exists():
        raise DesignationRefused(gettext("%(person)s is not a customer of %(organization)s: only its own people "
                                         "administer its sign-in.") % {"person": person.get_username(),
                                                                       "organization": organization.name})
    with transaction.atomic():
        row, created = Membership.objects.get_or_create(user=person, organization=organization,
                                                        role=MembershipRole.ORG_ADMIN)
    access.forget(person)
    if created:
        record(AuditKind.ORG_ADMIN, request=request, organization_id=organization.pk, method="designated",
               target=person.get_username(), outcome="ok")
    return row


def remove_designation(row: Membership, request) -> None:
    person, organization_id = row.user, row.organization_id
    row.delete()
    access.forget(person)
    record(AuditKind.ORG_ADMIN, request=request, organization_id=organization_id, method="removed",
           target=person.get_username(), outcome="ok")
