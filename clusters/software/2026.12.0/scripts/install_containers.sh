#!/bin/bash
# Container runtime for training jobs: Docker (and the NVIDIA container toolkit on GPU nodes),
# enroot to turn images into squashfs, and the pyxis Slurm plugin so "srun --container-image" works.
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
    pkg() { DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
    apt-get update -y
    arch="$(dpkg --print-architecture)"
    pkg docker.io squashfs-tools parallel jq
    enroot_pkg() { curl -fsSLO "https://github.com/NVIDIA/enroot/releases/download/v${ENROOT_VERSION}/$1_${ENROOT_VERSION}-1_${arch}.deb"; pkg "./$1_${ENROOT_VERSION}-1_${arch}.deb"; }
else
    pkg() { dnf install -y "$@"; }
    arch="$(uname -m)"
    pkg docker squashfs-tools jq
    enroot_pkg() { pkg "https://github.com/NVIDIA/enroot/releases/download/v${ENROOT_VERSION}/$1-${ENROOT_VERSION}-1.el8.${arch}.rpm"; }
fi
systemctl enable --now docker
if command -v nvidia-smi >/dev/null 2>&1 && ! command -v nvidia-ctk >/dev/null 2>&1; then
    echo "warning: nvidia-container-toolkit missing; GPU containers need the ParallelCluster/DLAMI image that ships it"
fi
work="$(mktemp -d)"
cd "$work"
if ! enroot version 2>/dev/null | grep -qx "$ENROOT_VERSION"; then
    enroot_pkg enroot
    enroot_pkg enroot+caps
fi
mkdir -p /etc/enroot
cat > /etc/enroot/enroot.conf <<CONF
ENROOT_RUNTIME_PATH /tmp/enroot/user-\$(id -u)
ENROOT_CACHE_PATH ${ENROOT_CACHE_PATH:-/fsx/enroot/cache}
ENROOT_DATA_PATH /tmp/enroot/data/user-\$(id -u)
ENROOT_SQUASH_OPTIONS -noI -noD -noF -noX -no-duplicates
ENROOT_MOUNT_HOME y
ENROOT_RESTRICT_DEV y
ENROOT_ROOTFS_WRITABLE y
CONF
slurm="${SLURM_PREFIX:-/opt/slurm}"
if [[ ! -f /usr/local/lib/slurm/spank_pyxis.so ]]; then
    git clone --depth 1 --branch "$PYXIS_VERSION" https://github.com/NVIDIA/pyxis.git "$work/pyxis"
    make -C "$work/pyxis" CPPFLAGS="-I$slurm/include" install
fi
mkdir -p "$slurm/etc/plugstack.conf.d"
echo "required /usr/local/lib/slurm/spank_pyxis.so" > "$slurm/etc/plugstack.conf.d/pyxis.conf"
grep -qs "plugstack.conf.d" "$slurm/etc/plugstack.conf" || echo "include $slurm/etc/plugstack.conf.d/*" >> "$slurm/etc/plugstack.conf"
rm -rf "$work"
