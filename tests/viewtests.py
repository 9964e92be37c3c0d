"""Generic test classes for a model's pages and API, after NetBox's ``ViewTestCases``/``APIViewTestCases``.

A model's test class inherits the cases it needs and declares the rest::

    class TestWorkloadPages(viewtests.ListTests, viewtests.DetailTests, viewtests.CreateTests):
        model = Workload
        factory = WorkloadFactory
        url_names = {"list": "workloads:workload_list", "detail": "workloads:workload_detail",
                     "add": "workloads:workload_add"}
        writer = "lead_a"

        def form_data(self, world): ...

Objects are organization A's (``make``); ``writer`` is the role of A that may write, ``read_only`` the
roles of A that may read but not write, ``foreign`` the users of organization B, who must learn nothing
(404 on A's objects, A's rows absent from lists and exports). Every write case checks what the
database holds afterwards, so a refused or invalid write leaves nothing half-written.
"""
from __future__ import annotations

import json

from django.urls import reverse

from tests.queries import assert_flat_queries


class ModelCase:
    model = None
    factory = None
    url_names: dict[str, str] = {}
    writer = "lead_a"
    read_only: tuple[str, ...] = ("customer_a",)
    foreign: tuple[str, ...] = ("customer_b", "lead_b")
    lookup = "pk"  # the URL keyword that names an object
    flat_sizes = (5, 15)
    flat_roles: tuple[str, ...] = ("pm",)  # who reads the list while its rows grow
    max_queries: int | dict | None = None  # a ceiling for the list (page, CSV, API) at the smaller size

    def make(self, world, **fields):
        """One object of organization A (override when the factory reaches the organization indirectly)."""
        return self.factory(organization=world.org_a, **fields)

    def make_foreign(self, world, **fields):
        return self.factory(organization=world.org_b, **fields)

    def grow(self, world, n: int) -> None:
        """Add ``n`` rows the list shows to the readers (organization A's and B's)."""
        for i in range(n):
            (self.make_foreign if i % 2 else self.make)(world)  # A first: an empty page skips prefetches

    def login(self, client, world, role: str):
        user = getattr(world, role)
        client.force_login(user)
        return user

    def url(self, name: str, obj=None) -> str:
        if obj is None:
            return reverse(self.url_names[name])
        return reverse(self.url_names[name], kwargs={self.lookup: getattr(obj, self.lookup)})

    def visible_marker(self, obj) -> str:
        """Text of ``obj`` that a page listing it shows (its detail link by default)."""
        return obj.get_absolute_url()

    def count(self) -> int:
        return self.model.objects.count()

    def belongs_to_a(self, world, obj) -> bool:
        """Whether a row the writer created belongs to organization A."""
        return obj.organization_id == world.org_a.pk

    @staticmethod
    def per_role(value, role: str):
        """``value`` is one value (a status, a ceiling) for every role or a mapping from role to value."""
        return value.get(role) if isinstance(value, dict) else value


class ListTests(ModelCase):
    """The list: organization A's rows for A's readers, none for B's; queries flat in the rows."""

    list_roles = ("lead_a", "customer_a", "pm")
    foreign_sees_own = True  # False where some of ``foreign`` see no rows at all (customers and escalations)

    def test_list_shows_the_organizations_rows_to_each_reader(self, client, world):
        obj = self.make(world)
        for role in self.list_roles:
            self.login(client, world, role)
            response = client.get(self.url("list"))
            assert response.status_code == 200, role
            assert self.visible_marker(obj) in response.content.decode(), role

    def test_list_hides_another_organizations_rows(self, client, world):
        obj, theirs = self.make(world), self.make_foreign(world)
        for role in self.foreign:
            self.login(client, world, role)
            response = client.get(self.url("list"))
            assert response.status_code == 200
            body = response.content.decode()
            assert self.visible_marker(obj) not in body, role
            assert not self.foreign_sees_own or self.visible_marker(theirs) in body, role

    def test_list_queries_do_not_grow(self, client, world):
        for role in self.flat_roles:
            self.login(client, world, role)
            assert_flat_queries(client, self.url("list"), grow=lambda n: self.grow(world, n), sizes=self.flat_sizes,
                                at_most=self.per_role(self.max_queries, role))


class CsvTests(ModelCase):
    """``?export=csv`` of the list: the same rows as the page, scoped, queries flat."""

    def _csv_lines(self, client) -> list[str]:
        response = client.get(self.url("list"), {"export": "csv"})
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        return b"".join(response.streaming_content).decode().splitlines()

    def test_csv_export_is_scoped(self, client, world):
        self.make(world)
        self.make_foreign(world)
        before = self.count()
        self.login(client, world, "pm")
        assert len(self._csv_lines(client)) - 1 == before
        for role in self.foreign:
            user = self.login(client, world, role)
            assert len(self._csv_lines(client)) - 1 == self.model.objects.restrict(user).count() < before, role

    def test_csv_queries_do_not_grow(self, client, world):
        for role in self.flat_roles:
            self.login(client, world, role)
            assert_flat_queries(client, self.url("list"), params={"export": "csv"},
                                grow=lambda n: self.grow(world, n), sizes=self.flat_sizes,
                                at_most=self.per_role(self.max_queries, role))


class DetailTests(ModelCase):
    """The object's page: 200 for its organization's readers, 404 for another organization's users."""

    foreign_detail_status = 404  # 403 where a page is refused to a whole role before any row is read

    def test_detail_for_readers_and_404_for_others(self, client, world):
        obj = self.make(world)
        for role in (self.writer, *self.read_only):
            self.login(client, world, role)
            assert client.get(self.url("detail", obj)).status_code == 200, role
        for role in self.foreign:
            self.login(client, world, role)
            assert client.get(self.url("detail", obj)).status_code == self.per_role(self.foreign_detail_status, role), role

    def test_anonymous_is_sent_to_login(self, client, world):
        obj = self.make(world)
        response = client.get(self.url("detail", obj))
        assert response.status_code == 302 and "/login" in response["Location"]


class CreateTests(ModelCase):
    """The create form: the writer creates in A; others are refused; invalid input writes nothing."""

    foreign_create_status = 403
    invalid_status = 200  # the form comes back with its errors (some views answer 400)

    def form_data(self, world) -> dict:
        raise NotImplementedError

    def invalid_form_data(self, world) -> dict:
        """The valid data with one field made invalid (the form comes back with errors)."""
        raise NotImplementedError

    def created(self, world):
        """The row the writer's valid post made."""
        return self.model.objects.latest("pk")

    def test_writer_creates(self, client, world):
        self.login(client, world, self.writer)
        before = self.count()
        response = client.post(self.url("add"), self.form_data(world))
        assert response.status_code == 302, response.content.decode()[:2000]
        assert self.count() == before + 1
        assert self.belongs_to_a(world, self.created(world))

    def test_others_may_not_create(self, client, world):
        before = self.count()
        for role in self.read_only:
            self.login(client, world, role)
            assert client.get(self.url("add")).status_code == 403, role
            assert client.post(self.url("add"), self.form_data(world)).status_code == 403, role
        for role in self.foreign:
            self.login(client, world, role)
            response = client.post(self.url("add"), self.form_data(world))
            assert response.status_code == self.per_role(self.foreign_create_status, role), (role, response.status_code)
        assert self.count() == before

    def test_invalid_input_creates_nothing(self, client, world):
        self.login(client, world, self.writer)
        before = self.count()
        response = client.post(self.url("add"), self.invalid_form_data(world))
        assert response.status_code == self.invalid_status and response.context["form"].errors
        assert self.count() == before


class EditTests(ModelCase):
    """The edit form: the writer changes A's object; read-only roles get 403, B's users 404, nothing changes."""

    def edit_data(self, world, obj) -> dict:
        """A valid post that changes the object (see ``edited``)."""
        raise NotImplementedError

    def edited(self, obj) -> bool:
        """Whether ``obj`` (reloaded) carries the change ``edit_data`` asks for."""
        raise NotImplementedError

    def test_writer_edits(self, client, world):
        obj = self.make(world)
        self.login(client, world, self.writer)
        assert client.get(self.url("edit", obj)).status_code == 200
        response = client.post(self.url("edit", obj), self.edit_data(world, obj))
        assert response.status_code == 302, response.content.decode()[:2000]
        obj.refresh_from_db()
        assert self.edited(obj)

    def test_others_may_not_edit(self, client, world):
        obj = self.make(world)
        for role, status in [*((r, 403) for r in self.read_only), *((r, 404) for r in self.foreign)]:
            self.login(client, world, role)
            assert client.get(self.url("edit", obj)).status_code == status, role
            assert client.post(self.url("edit", obj), self.edit_data(world, obj)).status_code == status, role
        obj.refresh_from_db()
        assert not self.edited(obj)


class DeleteTests(ModelCase):
    """The delete page: the writer deletes A's object; read-only roles get 403, B's users 404, the row stays."""

    def delete_data(self, obj) -> dict:
        return {}

    def deleted(self, obj) -> bool:
        """Whether the delete took effect (a row deleted in the background says so by its state)."""
        return not self.model.objects.filter(pk=obj.pk).exists()

    def test_writer_deletes(self, client, world):
        obj = self.make(world)
        self.login(client, world, self.writer)
        assert client.get(self.url("delete", obj)).status_code == 200
        response = client.post(self.url("delete", obj), self.delete_data(obj))
        assert response.status_code == 302, response.content.decode()[:2000]
        assert self.deleted(obj)

    def test_others_may_not_delete(self, client, world):
        obj = self.make(world)
        for role, status in [*((r, 403) for r in self.read_only), *((r, 404) for r in self.foreign)]:
            self.login(client, world, role)
            assert client.post(self.url("delete", obj), self.delete_data(obj)).status_code == status, role
        obj.refresh_from_db()
        assert not self.deleted(obj)


class ApiCase(ModelCase):
    """What the API cases share. ``api_basename`` is the router's name (``workloads-api:workload``);
    ``api_methods`` the writes the viewset offers (the others must answer 405)."""

    api_basename = ""
    api_methods = ("post", "patch", "delete")
    api_create_status = 201  # 202 where the write starts background work
    api_delete_status = 204
    api_read_only_create_status = 403  # 400 where the related field offers them nothing to write in
    api_foreign_create_status = 400  # organization A is not a choice B's users are offered

    # A read-only API keeps these defaults: every write must answer 405.
    def api_data(self, world) -> dict:
        return {}

    def api_invalid_data(self, world) -> dict:
        return {}

    def api_patch(self, world, obj) -> dict:
        return {}

    def api_patched(self, obj) -> bool:
        return False

    def api_deleted(self, obj) -> bool:
        """Whether the writer's delete took effect (a row deleted in the background says so by its state)."""
        return not self.model.objects.filter(pk=obj.pk).exists()

    def api_delete_url(self, obj) -> str:
        """Where the writer sends DELETE (some deletes ask for a confirmation in the query)."""
        return self.api_url(obj)

    def api_url(self, obj=None) -> str:
        if obj is None:
            return reverse(f"{self.api_basename}-list")
        return reverse(f"{self.api_basename}-detail", kwargs={self.lookup: getattr(obj, self.lookup)})

    def _send(self, client, method, url, data=None):
        return getattr(client, method)(url, json.dumps(data or {}), content_type="application/json")

    @staticmethod
    def _ids(response) -> set:
        body = response.json()
        return {row["id"] for row in (body["results"] if isinstance(body, dict) else body)}


class ApiListTests(ApiCase):
    """List and retrieve: scoped to what the user may see; the list's queries flat in the rows."""

    def test_api_list_and_retrieve_are_scoped(self, client, world):
        obj, other = self.make(world), self.make_foreign(world)
        for role in (self.writer, *self.read_only):
            self.login(client, world, role)
            response = client.get(self.api_url())
            assert response.status_code == 200 and obj.pk in self._ids(response), role
            assert role in ("pm", "staff") or other.pk not in self._ids(response), role  # A's members see only A
            assert client.get(self.api_url(obj)).json()["id"] == obj.pk, role
        for role in self.foreign:
            self.login(client, world, role)
            assert obj.pk not in self._ids(client.get(self.api_url())), role
            assert client.get(self.api_url(obj)).status_code == 404, role

    def test_api_list_queries_do_not_grow(self, client, world):
        for role in self.flat_roles:
            self.login(client, world, role)
            assert_flat_queries(client, self.api_url(), grow=lambda n: self.grow(world, n), sizes=self.flat_sizes,
                                at_most=self.per_role(self.max_queries, role))


class ApiCreateTests(ApiCase):
    """Create: the writer in A; read-only roles 403, B's users refused; bad input 400, nothing written."""

    def test_api_create(self, client, world):
        self.login(client, world, self.writer)
        before = self.count()
        response = self._send(client, "post", self.api_url(), self.api_data(world))
        if "post" not in self.api_methods:
            assert response.status_code == 405 and self.count() == before
            return
        assert response.status_code == self.api_create_status, response.content.decode()[:2000]
        assert self.belongs_to_a(world, self.model.objects.get(pk=response.json()["id"]))
        assert self.count() == before + 1

    def test_api_others_may_not_create_and_bad_input_writes_nothing(self, client, world):
        if "post" not in self.api_methods:
            return
        before = self.count()
        for role, status in [*((r, self.per_role(self.api_read_only_create_status, r)) for r in self.read_only),
                             *((r, self.per_role(self.api_foreign_create_status, r)) for r in self.foreign)]:
            self.login(client, world, role)
            response = self._send(client, "post", self.api_url(), self.api_data(world))
            assert response.status_code == status, (role, response.status_code)
        self.login(client, world, self.writer)
        response = self._send(client, "post", self.api_url(), self.api_invalid_data(world))
        assert response.status_code == 400 and response.json()
        assert self.count() == before


class ApiUpdateTests(ApiCase):
    """Update (PATCH): the writer; read-only roles 403, B's users 404, the row unchanged."""

    def test_api_update(self, client, world):
        obj = self.make(world)
        allowed = "patch" in self.api_methods
        for role, status in [*((r, 403 if allowed else 405) for r in self.read_only),
                             *((r, 404 if allowed else 405) for r in self.foreign)]:
            self.login(client, world, role)
            response = self._send(client, "patch", self.api_url(obj), self.api_patch(world, obj))
            assert response.status_code == status, (role, response.status_code)
        obj.refresh_from_db()
        assert not self.api_patched(obj)
        self.login(client, world, self.writer)
        response = self._send(client, "patch", self.api_url(obj), self.api_patch(world, obj))
        if not allowed:
            assert response.status_code == 405
            return
        assert response.status_code == 200, response.content.decode()[:2000]
        obj.refresh_from_db()
        assert self.api_patched(obj)


class ApiDeleteTests(ApiCase):
    """Delete: the writer; read-only roles 403, B's users 404, the row kept (405 for all without delete)."""

    def test_api_delete(self, client, world):
        obj = self.make(world)
        for role, status in [*((r, 403 if "delete" in self.api_methods else 405) for r in self.read_only),
                             *((r, 404 if "delete" in self.api_methods else 405) for r in self.foreign)]:
            self.login(client, world, role)
            assert client.delete(self.api_delete_url(obj)).status_code == status, role
        obj.refresh_from_db()
        assert not self.api_deleted(obj)
        self.login(client, world, self.writer)
        response = client.delete(self.api_delete_url(obj))
        if "delete" not in self.api_methods:
            assert response.status_code == 405 and self.model.objects.filter(pk=obj.pk).exists()
            return
        assert response.status_code == self.api_delete_status, response.content.decode()[:2000]
        assert self.api_deleted(obj)


class ApiTests(ApiListTests, ApiCreateTests, ApiUpdateTests, ApiDeleteTests):
    """Every API case (NetBox's ``APIViewTestCase``)."""
