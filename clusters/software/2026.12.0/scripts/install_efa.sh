#!/bin/bash
# EFA: libfabric, the EFA kernel module and rdma-core. The AMIs every blueprint uses ship them (HyperPod's
# and ParallelCluster's own AMIs, the Deep Learning AMIs; docs/blueprints.md, "What the AMIs ship"), so a node
# that has them keeps them: re-running the installer on every node costs boot time and internet egress from
# private subnets, and replaces the driver the AMI was validated with. The stack's pinned installer version
# is installed only where no EFA installer is present (a custom AMI without it), or where the stack asks for
# its pin everywhere (EFA_INSTALLER_POLICY=pinned in stack.env).
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

packages="${EFA_INSTALLED_PACKAGES:-/opt/amazon/efa_installed_packages}"
installed="$(sed -n 's/^# EFA installer version: //p' "$packages" 2>/dev/null || true)"
policy="${EFA_INSTALLER_POLICY:-ami}"
if [[ -n "$installed" && ( "$policy" != pinned || "$installed" == "$EFA_INSTALLER_VERSION" ) ]]; then
    echo "EFA installer $installed shipped with the AMI: kept (the stack pins $EFA_INSTALLER_VERSION for images and AMIs without EFA)"
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
