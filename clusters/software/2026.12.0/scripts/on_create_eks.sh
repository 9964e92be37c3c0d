#!/bin/bash
# SageMaker HyperPod lifecycle entry point (OnCreate) for clusters orchestrated by Amazon EKS. On EKS the
# node runs no Slurm and installs nothing on the host: EFA, NCCL and the exporters come as containers and
# device plugins (kubernetes/ in the bundle), FSx for Lustre through its CSI driver. What the node needs is
# room for images: containerd and the kubelet keep theirs on the instance's large volume (local NVMe where
# the instance has it, else the extra EBS volume HyperPod mounts at /opt/sagemaker), not on the root disk.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=/dev/null
source "$here/stack.env"
mkdir -p /var/log/provision
exec > >(tee -a /var/log/provision/provisioning.log) 2>&1
echo "GENIAC software stack $SOFTWARE_VERSION on $CLUSTER_NAME (EKS): node $(hostname)"
# The FSx CSI driver mounts with the host's Lustre client: on an EFA-enabled file system, LNet on the EFA
# devices first (a no-op otherwise; never fails the node).
bash "$here/configure_lustre_efa.sh"

if [[ -d /opt/dlami/nvme ]] && mountpoint -q /opt/dlami/nvme; then
    data=/opt/dlami/nvme
elif mountpoint -q /opt/sagemaker; then
    data=/opt/sagemaker
else
    echo "no large volume mounted; containerd keeps its default root"
    exit 0
fi
echo "containerd and kubelet data on $data"

containerd_config="${CONTAINERD_CONFIG:-/etc/containerd/config.toml}"
if [[ -f "$containerd_config" ]]; then
    mkdir -p "$data/containerd"
    if grep -q '^root *=' "$containerd_config"; then
        sed -i "s|^root *=.*|root = \"$data/containerd\"|" "$containerd_config"
    else
        sed -i "1i root = \"$data/containerd\"" "$containerd_config"
    fi
    systemctl restart containerd || echo "containerd not running yet; it starts with the new root"
fi
mkdir -p "$data/kubelet" /var/lib/kubelet
if ! mountpoint -q /var/lib/kubelet; then
    mount --bind "$data/kubelet" /var/lib/kubelet
    echo "$data/kubelet /var/lib/kubelet none bind 0 0" >> /etc/fstab
fi
echo "on_create_eks.sh done"
