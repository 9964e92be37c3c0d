#!/bin/bash
# Docker for training jobs and the exporters (and the NVIDIA container toolkit on GPU nodes, which the
# ParallelCluster and Deep Learning images ship). enroot and pyxis are install_pyxis.sh's: on compute nodes
# they must be in place before slurmd starts, so they run at OnNodeStart.
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

if command -v apt-get >/dev/null 2>&1; then
    apt-get update -y
    DEBIAN_FRONTEND=noninteractive apt-get install -y docker.io jq
else
    dnf install -y docker jq
fi
systemctl enable --now docker
if command -v nvidia-smi >/dev/null 2>&1 && ! command -v nvidia-ctk >/dev/null 2>&1; then
    echo "warning: nvidia-container-toolkit missing; GPU containers need the ParallelCluster/DLAMI image that ships it"
fi
echo "Docker ready (software stack $SOFTWARE_VERSION)"
