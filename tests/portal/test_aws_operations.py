"""The one list of AWS operations (portal/core/aws_operations.py) against the code, botocore's models and docs/aws.md."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from botocore import xform_name
from botocore.loaders import create_loader

from portal.core import aws_operations

ROOT = Path(__file__).resolve().parents[2]
# A call on a boto3 client: ``<client>.<operation>(`` or ``_call(<client>.<operation>, …)``.
_CLIENTS = r"(?:client|sagemaker|ssm|s3|cloudformation|eks|sts|grafana_client|ec2|_client\(\))"


def _product_modules() -> dict[str, str]:
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {name: (ROOT / name).read_text() for name in files.stdout.split()
            if not name.startswith(("tests/", "bench/", "sandbox/aws/")) and (ROOT / name).exists()}


def _called() -> set[tuple[str, str, str]]:
    loader, found = create_loader(), set()
    modules = _product_modules()
    for service in aws_operations.IAM_PREFIX:
        for name in loader.load_service_model(service, "service-2")["operations"]:
            snake = xform_name(name)
            call = re.compile(rf"{_CLIENTS}\.{snake}\b")
            by_name = re.compile(rf"[\"']{snake}[\"']")  # _call("create_stack", …), generate_presigned_url(…)
            found |= {(service, name, module) for module, text in modules.items()
                      if call.search(text) or ("aws.client(" in text and by_name.search(text))}
    return found


def test_every_operation_the_code_calls_is_listed_with_its_callers():
    listed: dict[tuple[str, str], set[str]] = {}
    for op in aws_operations.OPERATIONS:
        listed.setdefault((op.service, op.name), set()).update(op.callers)
    missing = sorted(f"{service} {name} in {module}" for service, name, module in _called()
                     if module not in listed.get((service, name), set()))
    assert missing == []


def test_every_listed_operation_exists_in_botocores_model_and_is_called_where_it_says():
    loader, called = create_loader(), {(s, n, m) for s, n, m in _called()}
    for op in aws_operations.OPERATIONS:
        assert op.name in loader.load_service_model(op.service, "service-2")["operations"], op
        assert any((op.service, op.name, caller) in called for caller in op.callers), op


def test_docs_aws_md_is_rendered_from_the_list():
    assert (ROOT / "docs" / "aws.md").read_text() == aws_operations.render(), (
        "regenerate it: python -m portal.core.aws_operations > docs/aws.md")


def test_the_readme_paragraph_names_every_permission_of_the_role():
    paragraph = aws_operations.readme_paragraph()
    for op in aws_operations.OPERATIONS:
        for action in op.actions():
            assert f"`{action}`" in paragraph
    assert "`ssm:SendCommand`" in paragraph and "`sagemaker:ListClusterNodes`" in paragraph


def test_the_readme_says_what_the_list_says():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert aws_operations.readme_paragraph() in readme, "README's 'Pointing it at real AWS' differs from the list"
