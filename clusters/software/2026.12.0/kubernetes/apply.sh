#!/bin/bash
# Install the software stack into a HyperPod EKS cluster: HyperPod's dependency chart, the FSx for Lustre
# volume, the exporters and the Prometheus agent (remote write to the organization's workspace), at the
# versions stack.env pins. Run it once the cluster stack is complete, from a machine whose AWS identity
# has an access entry on the EKS cluster (the stack's creator has one), with aws, kubectl, helm and git:
#   aws s3 cp --recursive s3://<bucket>/geniac/<cluster>/kubernetes/ k8s/ && bash k8s/apply.sh
# Then run NCCL validation with: kubectl apply -f k8s/nccl-tests-mpijob.yaml (GPU workers).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=/dev/null
source "$here/stack.env"

eks_cluster="${EKS_CLUSTER_NAME:-${CLUSTER_NAME}-eks}"
aws eks update-kubeconfig --region "$AWS_REGION" --name "$eks_cluster"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --depth 1 --branch "$HYPERPOD_HELM_CHART_VERSION" https://github.com/aws/sagemaker-hyperpod-cli.git "$work/cli"
helm dependency update "$work/cli/helm_chart/HyperPodHelmChart"
helm upgrade --install hyperpod-dependencies "$work/cli/helm_chart/HyperPodHelmChart" \
    --namespace kube-system --values "$here/hyperpod-dependencies.values.yaml" --wait

kubectl apply -f "$here/fsx-lustre.yaml"
kubectl apply -f "$here/dcgm-counters-configmap.yaml"
kubectl apply -f "$here/efa-exporter.yaml"

helm repo add nvidia-dcgm https://nvidia.github.io/dcgm-exporter/helm-charts
helm repo add prometheus-community https://prometheus-community.github.io/helm-charts
helm repo update
helm upgrade --install dcgm-exporter nvidia-dcgm/dcgm-exporter --version "$DCGM_EXPORTER_CHART_VERSION" \
    --namespace kube-system --values "$here/dcgm-exporter.values.yaml"
helm upgrade --install prometheus-agent prometheus-community/prometheus --version "$PROMETHEUS_CHART_VERSION" \
    --namespace monitoring --create-namespace --values "$here/prometheus-agent.values.yaml"

# The NCCL test image lives in the organization's registry.
account="$(aws sts get-caller-identity --query Account --output text)"
sed -i "s|ECR_REGISTRY|${account}.dkr.ecr.${AWS_REGION}.amazonaws.com|" "$here/nccl-tests-mpijob.yaml" 2>/dev/null || true
echo "software stack $SOFTWARE_VERSION installed in $eks_cluster"
