#!/bin/bash
# EFA installer at the pinned version: libfabric, the EFA kernel module and rdma-core. The AMIs ship
# an EFA installer already; it is replaced only when its version differs, so NCCL always runs on the
# libfabric this stack version was validated with.
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

installed="$(sed -n 's/^# EFA installer version: //p' /opt/amazon/efa_installed_packages 2>/dev/null || true)"
if [[ "$installed" == "$EFA_INSTALLER_VERSION" ]]; then
    echo "EFA installer $EFA_INSTALLER_VERSION already installed"
    exit 0
fi
work="$(mktemp -d)"
cd "$work"
curl -fsSLO "https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz"
tar -xzf "aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz"
cd aws-efa-installer
./efa_installer.sh -y
/opt/amazon/efa/bin/fi_info -p efa -t FI_EP_RDM >/dev/null || echo "warning: no EFA device visible (not an EFA instance?)"
rm -rf "$work"
