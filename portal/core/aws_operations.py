"""Every AWS operation the portal calls: why, where, and the IAM permission it needs. The one list.

``docs/aws.md`` is rendered from it (``python -m portal.core.aws_operations > docs/aws.md``; a test fails when the file
differs), and so is the README's "Pointing it at real AWS". ``tests/portal/test_aws_operations.py`` fails when the
code calls an operation of a listed service that is not here, or when an entry names an operation the installed
botocore's model does not have.

``principal``: ``role`` is an organization's role the portal assumes (the permissions go in that role's policy);
``portal`` is the portal's own identity (its instance or task role); ``program`` is the program's own role
(``AWS_PROGRAM_ROLE_ARN``, or the portal's identity when unset); ``demo`` is called only by the demo's seed.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Operation:
    service: str  # botocore's service name
    name: str  # the operation, as botocore's model names it
    why: str
    callers: tuple[str, ...]  # the modules that call it
    principal: str = "role"
    permissions: tuple[str, ...] = ()  # when not <service prefix>:<name>

    def actions(self) -> tuple[str, ...]:
        return self.permissions or (f"{IAM_PREFIX.get(self.service, self.service)}:{self.name}",)


IAM_PREFIX = {"ce": "ce", "cloudformation": "cloudformation", "ec2": "ec2", "eks": "eks", "grafana": "grafana",
              "s3": "s3", "sagemaker": "sagemaker", "ssm": "ssm", "sts": "sts", "support": "support"}
_PASS_ROLE = "iam:PassRole"
_BODIES = "clusters/health/ingest/bodies.py"
_BACKEND = "clusters/launches/backend.py"

OPERATIONS: tuple[Operation, ...] = (
    Operation("sts", "AssumeRole", "act in an organization's account through the role it trusts the portal with",
              ("portal/core/aws.py",), "portal"),
    Operation("sts", "GetCallerIdentity", "sign an EKS cluster's Kubernetes API token (presigned)",
              ("clusters/launches/kubernetes.py",)),
    Operation("cloudformation", "CreateStack", "launch a cluster from its blueprint", (_BACKEND,),
              permissions=("cloudformation:CreateStack", _PASS_ROLE)),
    Operation("cloudformation", "CreateChangeSet", "preview an update of a cluster's stack", (_BACKEND,)),
    Operation("cloudformation", "DescribeChangeSet", "read the preview before it is applied", (_BACKEND,)),
    Operation("cloudformation", "DeleteChangeSet", "drop a preview nobody applied", (_BACKEND,)),
    Operation("cloudformation", "DescribeStacks", "follow a launch; find a ParallelCluster head node",
              (_BACKEND, "clusters/health/validation/headnode.py")),
    Operation("cloudformation", "DescribeStackEvents", "show why a launch failed", (_BACKEND,)),
    Operation("cloudformation", "ListStackResources", "list what a launch made", (_BACKEND,)),
    Operation("cloudformation", "DeleteStack", "delete a cluster", (_BACKEND,)),
    Operation("sagemaker", "DescribeCluster", "a HyperPod cluster's status; EKS wiring",
              ("clusters/launches/kubernetes.py",)),
    Operation("sagemaker", "ListClusterNodes",
              "a HyperPod cluster's nodes: hostnames (PrivateDnsHostname), logical ids (IncludeNodeLogicalIds) and "
              "statuses, paged", ("clusters/remediation/providers.py",)),
    Operation("sagemaker", "BatchRebootClusterNodes", "reboot faulty HyperPod nodes (approved remediation)",
              ("clusters/remediation/providers.py",)),
    Operation("sagemaker", "BatchReplaceClusterNodes", "replace faulty HyperPod nodes (approved remediation)",
              ("clusters/remediation/providers.py",)),
    Operation("sagemaker", "ListClusterEvents",
              "HyperPod's own events on a cluster (its replacements, reboots and deep health checks), read once a "
              "minute from a cursor, paged; a node it replaced on its own closes the portal's faults for it",
              ("clusters/remediation/providers.py", "clusters/remediation/hyperpod_signals.py")),
    Operation("sagemaker", "DescribeClusterEvent",
              "an event's node (its logical id) and failure message, for replacements, reboots and failed checks",
              ("clusters/remediation/providers.py", "clusters/remediation/hyperpod_signals.py")),
    Operation("sagemaker", "StartClusterHealthCheck",
              "HyperPod's deep health checks on chosen nodes (a remediation kind: proposed by a lead SA, under the "
              "organization's consent), followed through the node's status", ("clusters/remediation/providers.py",)),
    Operation("sagemaker", "DescribeTrainingPlan", "check a SageMaker training plan's reserved capacity",
              ("clusters/accounting/reservation_checks.py",)),
    Operation("sagemaker", "CreateCluster", "the demo's HyperPod clusters", ("sandbox/remediation.py",),
              "demo", ("sagemaker:CreateCluster", _PASS_ROLE)),
    Operation("sagemaker", "ListClusters", "the demo finds the HyperPod clusters it made",
              ("sandbox/remediation.py",), "demo"),
    Operation("ssm", "SendCommand",
              "run sbatch/scontrol on a ParallelCluster head node (AWS-RunShellScript; instance ids only)",
              ("clusters/health/validation/headnode.py", "clusters/remediation/providers.py")),
    Operation("ssm", "GetCommandInvocation", "read a command's status and output (InvocationDoesNotExist at first)",
              ("clusters/health/validation/headnode.py", "clusters/remediation/providers.py")),
    Operation("ssm", "PutParameter",
              "write a HyperPod Slurm cluster's token to the SecureString parameter /geniac/<cluster>/agent-token, "
              "where the controller's agent reads it (at launch, and on each rotation)",
              ("clusters/health/validation/agent.py",)),
    Operation("ec2", "GetCapacityReservationUsage", "check an EC2 capacity reservation (capacity block) in force",
              ("clusters/accounting/reservation_checks.py",)),
    Operation("eks", "DescribeCluster", "an EKS cluster's API server and certificate (HyperPod on EKS)",
              ("clusters/health/validation/headnode.py", "clusters/launches/kubernetes.py")),
    Operation("eks", "CreateCluster", "the demo's EKS control plane", ("sandbox/remediation.py",), "demo",
              ("eks:CreateCluster", _PASS_ROLE)),
    Operation("eks", "ListClusters", "the demo finds the EKS clusters it made", ("sandbox/remediation.py",),
              "demo"),
    Operation("grafana", "ListWorkspaceServiceAccounts", "find the portal's service account (paged)",
              ("clusters/health/alerts/grafana.py",)),
    Operation("grafana", "CreateWorkspaceServiceAccount", "create it the first time",
              ("clusters/health/alerts/grafana.py",)),
    Operation("grafana", "CreateWorkspaceServiceAccountToken", "a short-lived token to provision the dashboards",
              ("clusters/health/alerts/grafana.py",)),
    Operation("s3", "PutObject", "upload the software bundle a launch installs", ("clusters/software/release.py",)),
    Operation("s3", "GetObject", "read the EKS access template a HyperPod launch left in the bucket",
              ("clusters/launches/kubernetes.py",)),
    Operation("s3", "CreateBucket", "the portal's bucket of health push bodies", (_BODIES,), "portal"),
    # Capacity for the next cycle's awards, asked through the program's own role (AWS_PROGRAM_ROLE_ARN).
    Operation("ec2", "DescribeCapacityBlockOfferings", "check that AWS can supply an award's Capacity Blocks",
              ("portal/engagement/calls/offerings.py",), "program"),
    Operation("sagemaker", "SearchTrainingPlanOfferings", "check that AWS can supply an award's training plans",
              ("portal/engagement/calls/offerings.py",), "program"),
    Operation("s3", "PutBucketLifecycleConfiguration", "expire push bodies", (_BODIES,), "portal",
              ("s3:PutLifecycleConfiguration",)),
    Operation("s3", "PutObject", "store a push body", (_BODIES,), "portal"),
    Operation("s3", "CreateMultipartUpload", "store a large push body", (_BODIES,), "portal", ("s3:PutObject",)),
    Operation("s3", "UploadPart", "store a large push body", (_BODIES,), "portal", ("s3:PutObject",)),
    Operation("s3", "CompleteMultipartUpload", "store a large push body", (_BODIES,), "portal", ("s3:PutObject",)),
    Operation("s3", "AbortMultipartUpload", "drop a push body that failed", (_BODIES,), "portal"),
    Operation("s3", "GetObject", "read a push body back", (_BODIES,), "portal"),
    Operation("s3", "HeadObject", "check a push body is stored", (_BODIES,), "portal", ("s3:GetObject",)),
    Operation("s3", "DeleteObject", "delete a push body once ingested", (_BODIES,), "portal"),
    Operation("support", "CreateCase", "open an AWS Support case from an interaction",
              ("workloads/interactions/desk/support.py",)),
    Operation("support", "DescribeCases", "sync a case's status and communications",
              ("workloads/interactions/desk/support.py",)),
    Operation("ce", "GetCostAndUsage", "an organization's daily spend", ("workloads/spend.py",)),
)

# What the embedded endpoint reproduces, by AWS behaviour (docs/aws.md's second table).
BEHAVIOURS: tuple[tuple[str, str], ...] = (
    ("Input validation", "every request is checked against its operation's input shape in botocore's model "
     "(required, types, enums, patterns, lengths, list sizes, ranges) and refused with the service's error "
     "(sandbox/aws/model_validation.py)"),
    ("Output shapes", "every successful answer is read back with botocore's parser and checked against the output "
     "shape (required members, types, enums, lengths, list sizes, ranges); on the JSON protocols (SageMaker, SSM, "
     "FSx, Grafana, EKS, Support, Cost Explorer) members the shape lacks are refused too, so an emulated answer "
     "cannot carry what AWS never returns (an OpenZFS file system's RootVolumeConfiguration is its root volume's, "
     "answered by DescribeVolumes). A broken answer is InternalFailure and fails the test that received it"),
    ("Conditional members", "members the model documents as returned only when a flag is set (HyperPod "
     "NodeLogicalId with IncludeNodeLogicalIds) are returned only then; PrivateDnsHostname always"),
    ("Eventual consistency", "SSM GetCommandInvocation answers InvocationDoesNotExist for the first read after "
     "SendCommand (sandbox/aws/moto_ssm.py)"),
    ("Throttling", "ThrottlingException on demand for the operations the tests slow down "
     "(sandbox/aws/moto_throttle.py, SendCommand)"),
    ("Pagination", "ListClusterNodes, ListClusterEvents and ListWorkspaceServiceAccounts page their answers with "
     "NextToken/nextToken; a ListClusterEvents token is refused for a request with other filters"),
    ("Batch limits", "BatchReboot/ReplaceClusterNodes take 1 to 25 node ids (the model's list size)"),
    ("Status transitions", "HyperPod nodes move through Pending/ShuttingDown to Running on reads, and through "
     "DeepHealthCheckInProgress to Running or Failure after StartClusterHealthCheck; SSM commands stay InProgress "
     "for their emulated run time"),
    ("HyperPod's own signals", "every reboot, replacement (asked, or HyperPod's own automatic node recovery, a "
     "tests' and demo's hook) and deep health check records its started and finished events for ListClusterEvents "
     "and DescribeClusterEvent (the node's logical id, a failed check's message), in the words of HyperPod's events "
     "reference (sandbox/aws/moto_cluster_events.py)"),
    ("Node targets", "SSM SendCommand to a HyperPod node (sagemaker-cluster:<id>_<group>-<instance>) is refused, "
     "as the model's InstanceIds pattern makes AWS refuse it; the portal never sends one. HyperPod nodes are reached "
     "through HyperPod's own API (BatchReboot/ReplaceClusterNodes, StartClusterHealthCheck) and, for Slurm on the "
     "controller, through the portal's agent there, which polls the portal over HTTPS and makes no AWS call "
     "(docs/DECISIONS.md 42). The embedded endpoint runs that agent program for each HyperPod controller it is asked "
     "to, its commands on the emulated Slurm (sandbox/aws/moto_agent.py)"),
)

# What the checks leave out (docs/aws.md's third table).
NOT_CHECKED: tuple[tuple[str, str], ...] = (
    ("Answer patterns", "answers are not held to the model's pattern constraints: AWS's own break some (SSM's "
     "ExecutionElapsedTime PT0.5S against its date pattern); requests are"),
    ("Extra members in XML answers", "on the query, EC2 and REST-XML protocols (CloudFormation, EC2, S3, STS) "
     "botocore's parser drops members the shape lacks before the check sees them, so only JSON answers are "
     "checked for them"),
    ("Errors", "error answers pass through unchecked: their codes and members are moto's and the patches' own, "
     "not held to the operation's error shapes"),
    ("Semantics the model does not state", "what a valid request does (which stack outputs a blueprint makes, how "
     "long a node takes to come back) is the emulation's own, held to AWS's documentation by the tests, not by "
     "the model"),
    ("HyperPod's event words", "the model gives an event no type: the portal reads what happened from its "
     "Description in the words of HyperPod's events reference, and the emulation writes those words, so a wording "
     "AWS changes is caught by neither (such an event is kept and shown, not acted on)"),
)


def model_versions() -> dict[str, str]:
    """The installed botocore's version and each listed service's API version."""
    import botocore
    from botocore.loaders import create_loader

    loader = create_loader()
    versions = {"botocore": botocore.__version__}
    for service in sorted({op.service for op in OPERATIONS}):
        versions[service] = loader.load_service_model(service, "service-2")["metadata"]["apiVersion"]
    return versions


def permissions(principal: str = "role") -> list[str]:
    """Every IAM action ``principal`` needs, sorted, once each."""
    return sorted({action for op in OPERATIONS if op.principal == principal for action in op.actions()})


def render() -> str:
    """docs/aws.md."""
    versions = model_versions()
    lines = [
        "# AWS operations the portal calls",
        "",
        "Generated from `portal/core/aws_operations.py` (`python -m portal.core.aws_operations > docs/aws.md`); a test fails",
        "when this file and the list differ. The embedded endpoint (`sandbox/aws/`) checks every call below",
        "against botocore's own service models:",
        "",
        "| model | version |", "|---|---|",
        *(f"| {name} | {version} |" for name, version in versions.items()),
        "",
        "Principal: `role` is the organization's role the portal assumes, `portal` the portal's own identity,",
        "`demo` only the demo's seed.",
        "",
        "| service | operation | why | IAM permission | principal | called from |", "|---|---|---|---|---|---|",
    ]
    for op in OPERATIONS:
        lines.append(f"| {op.service} | {op.name} | {op.why} | {', '.join(f'`{a}`' for a in op.actions())} | "
                     f"{op.principal} | {', '.join(f'`{c}`' for c in op.callers)} |")
    lines += ["", "## What the embedded endpoint reproduces", "", "| AWS behaviour | how |", "|---|---|"]
    lines += [f"| {name} | {how} |" for name, how in BEHAVIOURS]
    lines += ["", "## What it does not check yet", "", "| gap | why |", "|---|---|"]
    lines += [f"| {name} | {why} |" for name, why in NOT_CHECKED]
    lines += ["", "## Pointing it at real AWS", "", readme_paragraph(), ""]
    return "\n".join(lines)


def readme_paragraph() -> str:
    """The README's "Pointing it at real AWS": the permissions, per principal."""
    return ("Set `AWS_ENDPOINT_URL` empty and give each organization's role (assumed with its external id) "
            "these actions: " + ", ".join(f"`{a}`" for a in permissions("role")) + ". The portal's own identity "
            "needs " + ", ".join(f"`{a}`" for a in permissions("portal")) + " (the push-body bucket and "
            "`sts:AssumeRole` on the organizations' roles). The program's role (`AWS_PROGRAM_ROLE_ARN`) needs "
            + ", ".join(f"`{a}`" for a in permissions("program")) + " for the awards' capacity. The demo alone also uses "
            + ", ".join(f"`{a}`" for a in permissions("demo")) + ". Each operation and why: docs/aws.md.")


if __name__ == "__main__":
    sys.stdout.write(render())
