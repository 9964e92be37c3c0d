"""Sign-in throttling, the Content Security Policy, API tokens and their rate limit."""
from django.urls import reverse


def test_repeated_failed_sign_ins_lock_the_account(client, world):
    for _ in range(5):
        client.post(reverse("login"), {"username": "customer_a", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "customer_a", "password": "pw-for-tests"})
    assert response.status_code == 429
    assert b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in client.session


def test_other_users_are_not_locked_by_someone_elses_failures(client, world):
    for _ in range(5):
        client.post(reverse("login"), {"username": "customer_a", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "customer_b", "password": "pw-for-tests"})
    assert response.status_code == 302


def test_pages_carry_a_strict_content_security_policy(client, world):
    client.force_login(world.customer_a)
    response = client.get(world.org_a.get_absolute_url())
    policy = response["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy
    assert "unsafe-eval" not in policy and "object-src 'none'" in policy
    html = response.content.decode()
    assert '"allowEval": false' in html


def test_every_script_tag_is_external_or_carries_the_nonce(client, world):
    import re

    client.force_login(world.pm)
    response = client.get(reverse("review:overview"))
    nonce = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"]).group(1)
    tags = re.findall(r"<script[^>]*>", response.content.decode())
    # A data block (json_script: type="application/json") is never run, so it needs neither.
    assert any('type="application/json"' in tag for tag in tags)
    for tag in tags:
        assert "src=" in tag or f'nonce="{nonce}"' in tag or 'type="application/json"' in tag, tag


def test_api_token_exchange(client, world):
    response = client.post(reverse("api-token"), {"username": "lead_a", "password": "pw-for-tests"}, content_type="application/json")
    assert response.status_code == 200
    token = response.json()["token"]
    api = client.get("/api/portal/organizations/", headers={"Authorization": f"Token {token}"})
    assert api.status_code == 200
    assert [o["slug"] for o in api.json()["results"]] == ["alpha-labs"]


def test_api_tokens_expire(client, world):
    from datetime import timedelta

    from django.utils import timezone
    from knox.models import AuthToken

    instance, token = AuthToken.objects.create(user=world.lead_a, expiry=timedelta(hours=1))
    headers = {"Authorization": f"Token {token}"}
    assert client.get("/api/portal/organizations/", headers=headers).status_code == 200
    AuthToken.objects.filter(pk=instance.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert client.get("/api/portal/organizations/", headers=headers).status_code in (401, 403)
    exchanged = client.post(reverse("api-token"), {"username": "lead_a", "password": "pw-for-tests"},
                            content_type="application/json").json()
    assert exchanged["expiry"] is not None


def test_signing_out_revokes_every_api_token(client, world):
    tokens = [client.post(reverse("api-token"), {"username": "lead_a", "password": "pw-for-tests"},
                          content_type="application/json").json()["token"] for _ in range(2)]
    for token in tokens:
        assert client.get("/api/portal/organizations/", headers={"Authorization": f"Token {token}"}).status_code == 200
    client.force_login(world.lead_a)
    client.post(reverse("logout"))
    for token in tokens:
        assert client.get("/api/portal/organizations/", headers={"Authorization": f"Token {token}"}).status_code in (401, 403)


def test_an_api_client_revokes_its_own_token(client, world):
    token = client.post(reverse("api-token"), {"username": "lead_a", "password": "pw-for-tests"},
                        content_type="application/json").json()["token"]
    headers = {"Authorization": f"Token {token}"}
    assert client.post(reverse("api-token-revoke"), headers=headers).status_code == 204
    assert client.get("/api/portal/organizations/", headers=headers).status_code in (401, 403)


def test_legacy_never_expiring_tokens_are_not_accepted(client, world):
    from rest_framework.authtoken.models import Token

    legacy = Token.objects.create(user=world.lead_a)
    assert client.get("/api/portal/organizations/", headers={"Authorization": f"Token {legacy.key}"}).status_code in (401, 403)


def test_api_token_exchange_rejects_bad_password(client, world):
    response = client.post(reverse("api-token"), {"username": "lead_a", "password": "nope"}, content_type="application/json")
    assert response.status_code == 400


def test_token_endpoint_is_rate_limited(client, world, settings):
    from django.core.cache import cache
    from rest_framework.settings import api_settings
    from rest_framework.throttling import ScopedRateThrottle

    cache.clear()
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "token": "3/min"}
    original = ScopedRateThrottle.THROTTLE_RATES
    ScopedRateThrottle.THROTTLE_RATES = rates
    try:
        codes = [
            client.post(reverse("api-token"), {"username": "x", "password": "y"}, content_type="application/json").status_code
            for _ in range(5)
        ]
    finally:
        ScopedRateThrottle.THROTTLE_RATES = original
        cache.clear()
    assert codes[:3] == [400, 400, 400] and codes[3:] == [429, 429]


def test_api_docs_work_offline(client, world):
    client.force_login(world.pm)
    html = client.get(reverse("api-docs")).content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    schema = client.get(reverse("api-schema"))
    assert schema.status_code == 200 and b"openapi" in schema.content
