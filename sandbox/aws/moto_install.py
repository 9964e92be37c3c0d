"""Install the embedded endpoint's extensions of moto in the process that runs moto's server.

:func:`install` is the one place that knows every ``moto_*`` module: it imports them (which registers their
CloudFormation resource types, HTTP handlers and head-node commands) and applies their patches in order. The
modules themselves import only :mod:`sandbox.aws.moto_common` and the few they build on, so none imports this one.
"""
from __future__ import annotations

import threading

from moto.cloudformation import parsing

from sandbox.aws import (
    model_validation,
    moto_cluster_events,
    moto_control,  # noqa: F401 - importing it registers its HTTP handler
    moto_ec2,
    moto_eks,
    moto_fixes,
    moto_fsx,
    moto_grafana,  # noqa: F401 - importing it registers its HTTP handlers
    moto_headnode,
    moto_http,
    moto_hyperpod_nodes,
    moto_kubernetes,  # noqa: F401 - importing it registers its HTTP handlers
    moto_observability,
    moto_offerings,
    moto_pcluster,
    moto_resources,  # noqa: F401 - importing it registers its resource types
    moto_scontrol,  # noqa: F401 - importing it registers its head-node commands
    moto_ssm,
    moto_support,
    moto_training_plans,
)

_install_lock = threading.Lock()
_installed = False


def install() -> None:
    """Register the embedded endpoint's resource types with moto's CloudFormation (idempotent).

    Call it in the process that runs moto's server, before any stack is created. It also applies
    :mod:`sandbox.aws.moto_fixes` (moto behaviours the blueprints trip over),
    :mod:`sandbox.aws.moto_pcluster` (ParallelCluster's custom resource, provider stack and official
    images), :mod:`sandbox.aws.moto_ec2` (reservations, placement groups, what ParallelCluster's
    validators read), :mod:`sandbox.aws.moto_fsx` (FSx volumes and network interfaces),
    :mod:`sandbox.aws.moto_headnode` (SSM Run Command on an emulated head node),
    :mod:`sandbox.aws.moto_cluster_events` (HyperPod's cluster events and deep health checks),
    :mod:`sandbox.aws.moto_training_plans` (SageMaker training plans), :mod:`sandbox.aws.moto_offerings`
    (Capacity Block and training plan offerings) and
    :mod:`sandbox.aws.moto_http` (Amazon Managed Grafana, :mod:`sandbox.aws.moto_grafana`, and the EKS
    clusters' Kubernetes API servers, :mod:`sandbox.aws.moto_kubernetes`, and the demo's registrations,
    :mod:`sandbox.aws.moto_control`). :mod:`sandbox.aws.model_validation` checks every request and answer
    against botocore's service model in front of all of them.
    """
    global _installed
    with _install_lock:
        if _installed:
            return
        moto_fixes.apply()
        moto_pcluster.apply()
        moto_ec2.apply()
        moto_fsx.apply()
        moto_observability.apply()
        moto_eks.apply()
        moto_http.apply()
        model_validation.apply()  # after moto_http: the checks see its handlers' requests too
        moto_headnode.apply()
        moto_ssm.apply()  # after moto_headnode: wraps its invocations
        moto_hyperpod_nodes.apply()
        moto_cluster_events.apply()  # after moto_hyperpod_nodes: wraps its batch operations
        moto_support.apply()
        moto_training_plans.apply()
        moto_offerings.apply()
        for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
            cached.cache_clear()
        _installed = True
