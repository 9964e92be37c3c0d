"""Program managers and staff register an organization's identity provider through pages: the domains, the
secret never shown back, a domain another provider owns refused; everyone else is refused, and the program's own
provider is not on these pages."""
from __future__ import annotations

import pytest

from portal.core.sso.models import IdentityDomain, IdentityProvider

ADD = "/sso/providers/new/"


@pytest.fixture
def issuer(oidc_provider, loopback_calls) -> str:
    """An enabled provider's save reads its issuer's discovery document: the loopback provider's."""
    return oidc_provider.issuer


def _data(world, issuer, **changes) -> dict:
    return {"organization": world.org_a.pk, "name": "Alpha SSO", "issuer": issuer,
            "client_id": "portal", "client_secret": "s3cret", "domains": "alpha.example\nALPHA.co.jp",
            "enabled": "on", **changes}


def test_a_program_manager_registers_and_changes_an_organizations_provider(world, client, issuer):
    client.force_login(world.pm)
    assert client.get(ADD).status_code == 200
    answer = client.post(ADD, _data(world, issuer))
    assert answer.status_code == 302 and answer["Location"] == "/sso/providers/"
    provider = IdentityProvider.objects.get(organization=world.org_a)
    assert provider.client_secret == "s3cret" and not provider.passwords_allowed
    assert sorted(provider.domains.values_list("domain", flat=True)) == ["alpha.co.jp", "alpha.example"]
    edit = f"/sso/providers/{provider.pk}/edit/"
    page = client.get(edit)
    assert page.status_code == 200 and "s3cret" not in page.content.decode()
    # An empty secret keeps the stored one; the domains follow the list.
    data = {**_data(world, issuer, client_secret="", domains="alpha.example", passwords_allowed="on"),
            **{k: v for k, v in page.context["form"].initial.items() if k.startswith("_")}}
    version = page.context["form"].fields.get("_version")
    if version is not None:
        data["_version"] = version.initial
    assert client.post(edit, data).status_code == 302
    provider.refresh_from_db()
    assert provider.client_secret == "s3cret" and provider.passwords_allowed
    assert list(provider.domains.values_list("domain", flat=True)) == ["alpha.example"]
    assert "Alpha SSO" in client.get("/sso/providers/").content.decode()


def test_a_domain_another_provider_owns_is_refused(world, client, issuer):
    other = IdentityProvider.objects.create(organization=world.org_b, name="Beta SSO", issuer="https://b.example",
                                            client_id="c", client_secret="s")
    IdentityDomain.objects.create(provider=other, domain="beta.example")
    client.force_login(world.staff)
    answer = client.post(ADD, _data(world, issuer, domains="alpha.example beta.example"))
    assert answer.status_code in (200, 400) and "beta.example" in str(answer.context["form"].errors)
    assert not IdentityProvider.objects.filter(organization=world.org_a).exists()
    bad = client.post(ADD, _data(world, issuer, domains="not a domain"))
    assert "domains" in bad.context["form"].errors


def test_only_program_managers_and_staff_reach_the_pages(world, client, issuer):
    provider = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SSO",
                                               issuer="https://sso.alpha.example", client_id="c", client_secret="s")
    for name in ("customer_a", "lead_a", "customer_b", "lead_b"):
        client.force_login(getattr(world, name))
        for url in ("/sso/providers/", ADD, f"/sso/providers/{provider.pk}/edit/"):
            assert client.get(url).status_code == 403, (name, url)
        assert client.post(ADD, _data(world, issuer)).status_code == 403
    assert IdentityProvider.objects.count() == 1


def test_the_programs_own_provider_is_not_on_the_pages(world, client, issuer):
    program = IdentityProvider.objects.create(name="AWS", issuer="https://aws.example", client_id="c",
                                              client_secret="s")
    client.force_login(world.pm)
    assert client.get(f"/sso/providers/{program.pk}/edit/").status_code == 404
    assert "AWS" not in [p.name for p in client.get("/sso/providers/").context["object_list"]]
