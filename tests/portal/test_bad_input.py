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
    from portal import timeline

    timeline.record(world.org_a, "note", "entry")
    client.force_login(world.pm)
    response = client.get("/api/portal/timeline/", {"until": "2096-08-09T19:28:06.7711-23:53"})
    assert response.status_code == 200
    assert response.json()["count"] == 1
