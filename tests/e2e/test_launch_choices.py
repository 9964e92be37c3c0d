"""In a browser: choosing the organization on the launch form reloads its reservations (htmx)."""
import pytest

from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def launch_page(page, live_server, world):
    """lead_a, who leads organization A and Gamma (a reservation each), on the ParallelCluster launch form."""
    from portal.core.choices import MembershipRole
    from tests.factories import MembershipFactory, OrganizationFactory
    from tests.workloads.factories_workloads import CapacityReservationFactory

    gamma = OrganizationFactory(name="Gamma Labs", slug="gamma-labs")
    MembershipFactory(user=world.lead_a, organization=gamma, role=MembershipRole.LEAD_SA)
    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa0")
    gammas = CapacityReservationFactory(organization=gamma, reservation_id="cr-0ccccccccccccccc0")
    sign_in(page, live_server, "lead_a")
    page.goto(f"{live_server.url}/clusters/blueprints/parallelcluster/launch/")
    return gamma, ours, gammas


def test_the_reservation_list_follows_the_organization(page, launch_page, world):
    gamma, ours, gammas = launch_page
    page.evaluate("window.__no_reload = 'still here'")
    options = page.locator('[name="cluster__CapacityReservationId"] option')
    assert options.count() == 1  # "None (on demand)" until an organization is chosen
    page.locator('[name="organization"]').select_option(str(gamma.pk))
    page.locator(f'option[value="{gammas.reservation_id}"]').wait_for(state="attached", timeout=45000)
    assert page.locator(f'option[value="{ours.reservation_id}"]').count() == 0
    page.locator('[name="organization"]').select_option(str(world.org_a.pk))
    page.locator(f'option[value="{ours.reservation_id}"]').wait_for(state="attached", timeout=45000)
    assert page.locator(f'option[value="{gammas.reservation_id}"]').count() == 0
    assert page.evaluate("window.__no_reload") == "still here"
    assert not page.console_errors, page.console_errors


def test_a_change_made_while_the_choices_are_being_swapped_is_not_lost(page, launch_page, world):
    """The organization changes again in the instant the first reload's answer is swapped in, before htmx has
    settled it: the second reload still happens and the list ends on the second organization."""
    gamma, ours, gammas = launch_page
    page.evaluate("""([second]) => {
        document.body.addEventListener("htmx:afterSwap", () => {
            const select = document.querySelector("#id_organization");
            select.value = second;
            select.dispatchEvent(new Event("change", {bubbles: true}));
        }, {once: true});
    }""", [str(world.org_a.pk)])
    page.locator('[name="organization"]').select_option(str(gamma.pk))
    page.locator(f'option[value="{ours.reservation_id}"]').wait_for(state="attached", timeout=45000)
    assert page.locator(f'option[value="{gammas.reservation_id}"]').count() == 0
    assert not page.console_errors, page.console_errors
