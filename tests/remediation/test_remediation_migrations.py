"""The migration that closes what an archive before ``close_archived`` left open: actions proposed or approved on an
archived cycle's clusters are cancelled and their nodes released; running ones and the active cycle's are kept."""
import pytest

from tests.migrations import migrate, rolled_back_to

BEFORE = [("remediation", "0003_remediation_policy_change")]
AFTER = [("remediation", "0004_close_archived_cycles_open_actions")]


@pytest.mark.django_db(transaction=True)
def test_open_actions_of_archived_cycles_are_cancelled_and_release_their_nodes():
    with rolled_back_to(BEFORE) as old:
        Organization = old.get_model("portal", "Organization")
        Cycle = old.get_model("portal", "Cycle")
        Cluster = old.get_model("clusters", "Cluster")
        Action = old.get_model("remediation", "RemediationAction")
        Node = old.get_model("remediation", "RemediationNode")
        org = Organization.objects.create(name="Leaving", slug="leaving", aws_account_id="123456789012")
        Cycle.objects.filter(status="active").update(status="archived")
        archived = Cycle.objects.create(number=70, name="Cycle 70", status="archived")
        active = Cycle.objects.create(number=71, name="Cycle 71", status="active")
        stayed = Cluster.objects.create(organization=org, name="stayed", region="ap-northeast-1", node_count=2,
                                        instance_type="p5.48xlarge", cycle_id=archived.pk)
        live = Cluster.objects.create(organization=org, name="live", region="ap-northeast-1", node_count=2,
                                      instance_type="p5.48xlarge", cycle_id=active.pk)
        rows = {}
        for name, cluster, state in (("proposed", stayed, "proposed"), ("approved", stayed, "approved"),
                                     ("running", stayed, "running"), ("live", live, "proposed")):
            rows[name] = Action.objects.create(organization=org, cluster=cluster, kind="reboot", key=name,
                                               state=state, nodes=[f"ip-{name}"])
            Node.objects.create(action=rows[name], cluster=cluster, hostname=f"ip-{name}")
        migrate(AFTER)
        states = dict(Action.objects.values_list("key", "state"))
        assert states == {"proposed": "cancelled", "approved": "cancelled", "running": "running", "live": "proposed"}
        assert set(Action.objects.filter(state="cancelled").values_list("refused_rule", flat=True)) == {
            "cycle_archived"}
        assert set(Node.objects.filter(active=True).values_list("hostname", flat=True)) == {"ip-running", "ip-live"}
        migrate([("remediation", "0005_action_refusal_repeats")])
