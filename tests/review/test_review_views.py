"""Frozen weekly reviews through the generic page and API cases (tests/viewtests.py): program managers only."""
from portal.review.models import ActionItem, WeeklyReview
from tests import viewtests
from tests.review.factories_review import WeeklyReviewFactory


class ReviewCase(viewtests.ModelCase):
    model = WeeklyReview
    factory = WeeklyReviewFactory
    writer = "pm"
    read_only = ("staff",)
    foreign = ("customer_a", "lead_a", "customer_b", "lead_b")
    url_names = {"detail": "review:review_detail"}
    api_basename = "review-api:weeklyreview"
    api_methods = ()
    flat_sizes = (3, 30)

    def make(self, world, **fields):
        return self.factory(**fields)

    make_foreign = make

    def grow(self, world, n):
        for _ in range(n):
            review = self.factory(frozen_by=world.pm)
            ActionItem.objects.bulk_create([ActionItem(review=review, title=f"a{j}", owner=world.lead_a)
                                            for j in range(3)])


class TestReviewPages(ReviewCase, viewtests.DetailTests):
    foreign_detail_status = 403  # the review's pages are refused to everyone but program managers and staff


class TestReviewApi(ReviewCase, viewtests.ApiTests):
    max_queries = 6  # the 4 of an authenticated API call + the session and its user

    def test_api_list_and_retrieve_are_scoped(self, client, world):
        """Reviews belong to no organization: program managers see every one, nobody else any."""
        obj = self.make(world)
        for role in ("pm", "staff"):
            self.login(client, world, role)
            assert obj.pk in self._ids(client.get(self.api_url())), role
            assert client.get(self.api_url(obj)).json()["id"] == obj.pk, role
        for role in self.foreign:
            self.login(client, world, role)
            assert self._ids(client.get(self.api_url())) == set(), role
            assert client.get(self.api_url(obj)).status_code == 404, role
