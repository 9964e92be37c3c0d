"""The demo program, modeled on GENIAC's second cycle: twelve organizations, their lead SAs, a
program manager. Other apps add their part through ``DEMO_SEEDERS`` (seed_demo runs them in order).
Every step is idempotent: seeding twice changes nothing."""
from __future__ import annotations

from dataclasses import dataclass

from portal.core.choices import MembershipRole
from portal.core.models import Membership, Organization, User

DEMO_PASSWORD = "geniac-demo"


@dataclass(frozen=True)
class DemoOrg:
    slug: str
    name: str
    description: str
    account: str
    region: str
    lead: str


ORGANIZATIONS = (
    DemoOrg("kotoba-labs", "Kotoba Labs", "100B-parameter Japanese LLM, pre-trained from scratch on P5.", "111111111101", "ap-northeast-1", "lead"),
    DemoOrg("shirakawa-ai", "Shirakawa AI", "405B multilingual model for tourism, continued pre-training of Llama 3.1 405B.", "111111111102", "ap-northeast-1", "lead"),
    DemoOrg("mirai-code", "Mirai Code", "8B Japanese code model, fine-tuned from Llama 3.1 8B.", "111111111103", "ap-northeast-1", "lead"),
    DemoOrg("sakura-vision", "Sakura Vision", "32B multimodal model trained on Trainium.", "111111111104", "us-east-1", "lead"),
    DemoOrg("aozora-docs", "Aozora Documents", "Document-understanding VLM trained on 100,000 synthetic samples.", "111111111105", "ap-northeast-1", "lead2"),
    DemoOrg("hokuto-speech", "Hokuto Speech", "Japanese speech foundation model.", "111111111106", "ap-northeast-1", "lead2"),
    DemoOrg("tsubasa-robotics", "Tsubasa Robotics", "Vision-language-action model for factory robots.", "111111111107", "us-west-2", "lead2"),
    DemoOrg("kumo-finance", "Kumo Finance", "13B finance-domain LLM.", "111111111108", "ap-northeast-1", "lead2"),
    DemoOrg("minato-medical", "Minato Medical", "70B medical LLM, continued pre-training.", "111111111109", "ap-northeast-1", "lead3"),
    DemoOrg("yamabiko-research", "Yamabiko Research", "Mixture-of-experts LLM, 8 × 22B.", "111111111110", "ap-northeast-1", "lead3"),
    DemoOrg("kaze-weather", "Kaze Weather", "Weather and climate foundation model.", "111111111111", "us-east-2", "lead3"),
    DemoOrg("hoshi-materials", "Hoshi Materials", "Materials-science foundation model on Trainium.", "111111111112", "us-east-1", "lead3"),
)

LEADS = {
    "lead": ("Aiko", "Sato"),
    "lead2": ("Kenji", "Tanaka"),
    "lead3": ("Mei", "Watanabe"),
}

# (username, what the role is) printed by the demo at start.
LOGINS = (
    ("pm", "program manager: the program overview and the weekly review"),
    ("lead", "lead solutions architect for Kotoba Labs, Shirakawa AI, Mirai Code, Sakura Vision"),
    ("kotoba", "customer: an ML engineer of Kotoba Labs"),
    ("shirakawa", "customer: an ML engineer of Shirakawa AI, who approves its node remediation"),
    ("admin", "staff: the admin site"),
    ("frameworks", "specialist: the WWSO Frameworks team's escalations, nothing else"),
    ("ec2", "specialist: the EC2 service team's escalations, nothing else"),
)


def _user(username: str, *, first: str = "", last: str = "", **flags) -> User:
    user, created = User.objects.get_or_create(
        username=username, defaults={"first_name": first, "last_name": last, "email": f"{username}@example.com", **flags}
    )
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    elif (first or last) and not (user.first_name or user.last_name):
        # A user an earlier step created by username alone gets the name every page shows.
        user.first_name, user.last_name = first, last
        user.save(update_fields=["first_name", "last_name"])
    return user


def seed_core() -> dict:
    pm = _user("pm", first="Haruka", last="Ito", is_program_manager=True)
    admin = _user("admin", first="Portal", last="Admin", is_staff=True, is_superuser=True)
    leads = {name: _user(name, first=f, last=last) for name, (f, last) in LEADS.items()}
    orgs = {}
    for spec in ORGANIZATIONS:
        org, _ = Organization.objects.get_or_create(
            slug=spec.slug,
            defaults={
                "name": spec.name,
                "description": spec.description,
                "aws_account_id": spec.account,
                "role_arn": f"arn:aws:iam::{spec.account}:role/GeniacPortalAccess",
                "external_id": f"geniac-{spec.slug}",
                "home_region": spec.region,
            },
        )
        orgs[spec.slug] = org
        Membership.objects.get_or_create(user=leads[spec.lead], organization=org, role=MembershipRole.LEAD_SA)
        customer = _user(spec.slug.split("-")[0], first=spec.name.split()[0], last="Engineer")
        Membership.objects.get_or_create(user=customer, organization=org, role=MembershipRole.CUSTOMER)
    return {"pm": pm, "admin": admin, "leads": leads, "organizations": orgs}


# Dotted paths of functions taking the context dict returned by seed_core (and extending it).
DEMO_SEEDERS: list[str] = [
    "sandbox.workloads.seed",
    "sandbox.interactions.seed",
    "sandbox.enablement.seed",
    "sandbox.clusters.seed",
    "sandbox.health.seed",
    "sandbox.review.seed",
    "sandbox.engagement.seed",
    "sandbox.accelerator_hours.seed",
    "sandbox.accelerator_history.seed",
    "sandbox.reservations.seed",
    "sandbox.costs.seed",  # after the accounting seeds: the cost follows the hours they stored
    "sandbox.remediation.seed",
    "sandbox.validation.seed",
    "sandbox.calls.seed",
    "sandbox.sso.seed",  # Mirai Code's identity provider, when run_demo started one
    "sandbox.funder.seed",  # last: the report reads every other seed's figures
]
