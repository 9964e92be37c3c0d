"""Input that would reach the database as an error gets a clear 400 instead."""


def test_nul_in_query_string_is_refused(client, world):
    client.force_login(world.pm)
    response = client.get("/api/portal/organizations/?slug=a%00b")
    assert response.status_code == 400
    assert response.json() == {"detail": "Input must not contain NUL characters."}


def test_nul_in_json_body_is_refused(client, world):
    client.force_login(world.staff)
    response = client.post("/api/portal/organizations/", data='{"name": "x\\u0000y"}', content_type="application/json")
    assert response.status_code == 400


def test_nul_in_form_body_is_refused(client, world):
    client.force_login(world.pm)
    response = client.post("/login/", data="username=a%00&password=b", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400


def test_datetime_filter_with_an_offset_postgresql_cannot_store(client, world):
    from portal.core import timeline

    timeline.record(world.org_a, "note", "entry")
    client.force_login(world.pm)
    response = client.get("/api/portal/timeline/", {"until": "2096-08-09T19:28:06.7711-23:53"})
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_limit_and_offset_out_of_range_are_a_400(client, world):
    client.force_login(world.pm)
    for params in ({"limit": "99999999999999999999999"}, {"limit": "1000000"}, {"limit": "0"}, {"limit": "-1"},
                   {"limit": "ten"}, {"offset": "-5"}, {"offset": "1e3"}, {"offset": "99999999999999999999999"},
                   {"limit": "٣"}):
        response = client.get("/api/portal/organizations/", params)
        assert response.status_code == 400, params
        assert list(response.json()) == list(params)


def test_limit_is_bounded_and_valid_numbers_work(client, world):
    from portal.core.api.pagination import MAX_LIMIT

    client.force_login(world.pm)
    assert client.get("/api/portal/organizations/", {"limit": str(MAX_LIMIT)}).status_code == 200
    page = client.get("/api/portal/organizations/", {"limit": "1", "offset": "1"}).json()
    assert page["count"] == 2 and len(page["results"]) == 1
    assert client.get("/api/portal/organizations/", {"limit": str(MAX_LIMIT + 1)}).status_code == 400


def test_deeply_nested_json_is_a_400(client, world):
    client.force_login(world.staff)
    body = '{"name": ' + "[" * 5000 + "]" * 5000 + "}"
    response = client.post("/api/portal/organizations/", data=body, content_type="application/json")
    assert response.status_code == 400 and "nested deeper" in response.json()["detail"]
    # Brackets inside strings are text, not nesting.
    from portal.core.api.parsers import nesting_depth

    assert nesting_depth('{"a": "[[[[[[\\"[[["}') == 1


def test_nul_in_a_multipart_field_is_refused(client, world):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a)
    client.force_login(world.lead_a)
    url = f"/clusters/{cluster.pk}/validation/new/"
    for data in ({"notes": "a\x00b", "text": "x"},
                 {"file": SimpleUploadedFile("out.txt", b"# nccl"), "notes": "x\x00"}):
        response = client.post(url, data)  # the test client sends multipart/form-data
        assert response.status_code == 400, data
        assert response.json() == {"detail": "Input must not contain NUL characters."}
    api = client.post("/api/health/validation-runs/", {"cluster": cluster.pk, "text": "a\x00b"})
    assert api.status_code == 400


def test_uploads_over_the_limit_are_refused_before_the_body_is_read(rf, world, settings):
    """The declared length is checked before reading: the stream is never read past the headers."""
    import io
    import json

    from django.core.handlers.wsgi import WSGIRequest

    from portal.core.middleware import RejectNulBytesMiddleware

    settings.FILE_UPLOAD_MAX_BYTES = 1000
    boundary = "BoUnDaRy"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode() + b"x" * 5000 + f"\r\n--{boundary}--\r\n".encode()

    class CountingReader(io.BytesIO):
        consumed = 0

        def read(self, size=-1):
            chunk = super().read(size)
            CountingReader.consumed += len(chunk)
            return chunk

    environ = rf._base_environ(PATH_INFO="/clusters/1/validation/new/", REQUEST_METHOD="POST",
                               CONTENT_TYPE=f"multipart/form-data; boundary={boundary}",
                               CONTENT_LENGTH=str(len(body)), **{"wsgi.input": CountingReader(body)})
    request = WSGIRequest(environ)
    reached = []
    response = RejectNulBytesMiddleware(lambda r: reached.append(r))(request)
    assert response.status_code == 413 and "over 1,000 bytes" in json.loads(response.content)["detail"]
    assert reached == [] and CountingReader.consumed == 0


def test_uploads_over_the_limit_get_413_through_the_stack(client, world, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.health.factories_health import ClusterFactory

    settings.FILE_UPLOAD_MAX_BYTES = 1000
    cluster = ClusterFactory(organization=world.org_a)
    client.force_login(world.lead_a)
    response = client.post(f"/clusters/{cluster.pk}/validation/new/",
                           {"file": SimpleUploadedFile("big.txt", b"x" * 5000)})
    assert response.status_code == 413


def test_api_paths_no_route_matches_answer_json(client, world):
    client.force_login(world.pm)
    response = client.get("/api/clusters/blueprints/a%2Fb%3F/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert client.get("/no-such-page/")["Content-Type"].startswith("text/html")


def test_json_text_that_only_looks_like_nul_is_kept(client, world):
    """In JSON, "%00" is text and "\\\\u0000" is a backslash followed by "u0000": both are stored as written,
    while a real escape (after an even number of backslashes) is still refused."""
    import json

    from django.urls import reverse

    from workloads.interactions.models import Interaction

    client.force_login(world.lead_a)
    url = reverse("interactions-api:interaction-list")
    base = {"organization": world.org_a.pk, "kind": "support_case", "severity": "high", "visibility": "shared"}
    for summary in ("50%00 of ranks", "path C:\\u0000\\logs"):
        response = client.post(url, data=json.dumps({**base, "summary": summary}), content_type="application/json")
        assert response.status_code == 201, response.content
        assert Interaction.objects.get(pk=response.json()["id"]).summary == summary
    for raw in ('"x\\u0000y"', '"x\\\\\\u0000y"'):
        body = json.dumps({**base, "summary": "placeholder"}).replace('"placeholder"', raw)
        response = client.post(url, data=body, content_type="application/json")
        assert response.status_code == 400
        assert response.json() == {"detail": "Input must not contain NUL characters."}
    assert Interaction.objects.count() == 2


def test_a_deeply_nested_sns_body_is_a_400_not_a_crash(client, db):
    """Anonymous: 100,000 nested ``[`` made the decoder raise RecursionError, which the endpoint did not catch."""
    for body in ("[" * 100_000, '{"Type": ' + "[" * 100_000 + "]" * 100_000 + "}"):
        response = client.post("/api/health/alerts/sns/", data=body, content_type="text/plain")
        assert response.status_code == 400, response.content[:200]
        assert "nested deeper" in response.json()["detail"]


def test_every_reader_of_outside_json_bounds_its_nesting():
    """JSON the portal did not write is read through ``portal.core.json_input.loads`` only (it bounds nesting before
    decoding). A ``json.loads``/``json.load`` or ``.json()`` of a third-party client elsewhere fails this test
    unless it is listed here with why its input is the portal's own."""
    import re
    from pathlib import Path

    own_json = {
        "portal/core/versions.py": "round-trips a value the portal itself holds through its own encoder",
        "portal/core/submissions.py": "reads back the body the portal's own renderer just wrote",
        "portal/core/json_input.py": "the bounded reader itself",
        "portal/review/funder/services.py": "round-trips the figures it computed through JSON before freezing them",
        "clusters/software/2026.12.0/scripts/geniac_agent.py": "the controller agent, run on the cluster with the "
        "standard library only: reads the portal's answers (the portal is what it trusts) and its own state files",
    }
    root = Path(__file__).resolve().parents[2]
    found = []
    for package in ("portal", "workloads", "clusters"):
        for path in (root / package).rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if "/migrations/" in relative or relative.startswith("sandbox/aws/"):  # the embedded endpoint: tests only
                continue
            text = path.read_text()
            if re.search(r"\bjson\.loads?\(|\brequests\b.*\.json\(\)", text) and relative not in own_json:
                found.append(relative)
    assert not found, f"decode outside JSON with portal.core.json_input.loads: {found}"


def test_the_bounded_reader_refuses_depth_as_a_value_error():
    import pytest

    from portal.core.json_input import TooDeep, loads

    assert loads(b'{"a": [[1]]}') == {"a": [[1]]} and loads('"[[[["') == "[[[["
    with pytest.raises(TooDeep):
        loads("[" * 100_000)
    with pytest.raises(ValueError):
        loads("[" * 65 + "]" * 65)
    assert loads("[" * 64 + "]" * 64, max_depth=64)


def test_too_many_multipart_fields_is_a_400_on_every_api_create(client, world):
    """Over DATA_UPLOAD_MAX_NUMBER_FIELDS the body was consumed by a failed parse and every API create then
    answered 500 (RawPostDataException), with or without an Idempotency-Key."""
    from django.conf import settings

    from portal.core.models import Organization, Submission

    client.force_login(world.staff)
    data = {f"field{i}": "x" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    data.update(name="Many Fields", slug="many-fields", aws_account_id="123456789055")
    for headers in ({}, {"HTTP_IDEMPOTENCY_KEY": "many-fields-1"}):
        for url in ("/api/portal/organizations/", "/api/workloads/workloads/", "/api/interactions/interactions/"):
            response = client.post(url, data, **headers)  # multipart/form-data
            assert response.status_code == 400, (url, response.content[:300])
            assert response.json() == {"detail": f"The request has more than "
                                                 f"{settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields."}
    assert not Organization.objects.filter(slug="many-fields").exists() and not Submission.objects.exists()
    # Within the limit the same create works.
    small = {"name": "Many Fields", "slug": "many-fields", "aws_account_id": "123456789055"}
    assert client.post("/api/portal/organizations/", small).status_code == 201
