#!/bin/bash
# enroot (container images as squashfs) and the pyxis Slurm plugin, so "srun --container-image" works.
# Compute nodes run this at ParallelCluster's OnNodeStart (before slurmd starts) and HyperPod workers before
# on_create.sh starts slurmd; the head node and controller run it too, because srun reads the plugin stack
# where it is called. The plugin stack is complete before slurmd is (re)started: slurmd loads SPANK plugins
# only when it starts, so a slurmd already running is restarted once the configuration is written.
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

slurm="${SLURM_PREFIX:-/opt/slurm}"
enroot_conf_dir="${ENROOT_CONF_DIR:-/etc/enroot}"
pyxis_lib="${PYXIS_LIB_DIR:-/usr/local/lib/slurm}"
if command -v apt-get >/dev/null 2>&1; then
    pkg() { DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
    apt-get update -y
    arch="$(dpkg --print-architecture)"
    pkg squashfs-tools parallel fuse-overlayfs squashfuse
    enroot_pkg() { curl -fsSLO "https://github.com/NVIDIA/enroot/releases/download/v${ENROOT_VERSION}/$1_${ENROOT_VERSION}-1_${arch}.deb"; pkg "./$1_${ENROOT_VERSION}-1_${arch}.deb"; }
else
    pkg() { dnf install -y "$@"; }
    arch="$(uname -m)"
    pkg squashfs-tools
    enroot_pkg() { pkg "https://github.com/NVIDIA/enroot/releases/download/v${ENROOT_VERSION}/$1-${ENROOT_VERSION}-1.el8.${arch}.rpm"; }
fi
work="$(mktemp -d)"
cd "$work"
if ! enroot version 2>/dev/null | grep -qx "$ENROOT_VERSION"; then
    enroot_pkg enroot
    enroot_pkg enroot+caps
fi
# As the reference (HyperPod base-config utils/enroot.conf): lzo-compressed squash images (fast to build
# and to mount), no home mounted and an unrestricted /dev by default. pyxis mounts the home directory
# itself when a job asks (--container-mount-home), and a restricted /dev would hide the EFA devices
# (/dev/infiniband) that NCCL needs inside the container.
mkdir -p "$enroot_conf_dir"
cat > "$enroot_conf_dir/enroot.conf" <<CONF
ENROOT_RUNTIME_PATH /tmp/enroot/user-\$(id -u)
ENROOT_CACHE_PATH ${ENROOT_CACHE_PATH:-/fsx/enroot/cache}
ENROOT_DATA_PATH /tmp/enroot/data/user-\$(id -u)
ENROOT_SQUASH_OPTIONS -comp lzo -noI -noD -noF -noX -no-duplicates
ENROOT_MOUNT_HOME no
ENROOT_RESTRICT_DEV no
ENROOT_ROOTFS_WRITABLE yes
CONF
if [[ ! -f "$pyxis_lib/spank_pyxis.so" ]]; then
    git clone --depth 1 --branch "$PYXIS_VERSION" https://github.com/NVIDIA/pyxis.git "$work/pyxis"
    make -C "$work/pyxis" CPPFLAGS="-I$slurm/include" install
fi
mkdir -p "$slurm/etc/plugstack.conf.d"
echo "required $pyxis_lib/spank_pyxis.so" > "$slurm/etc/plugstack.conf.d/pyxis.conf"
grep -qs "plugstack.conf.d" "$slurm/etc/plugstack.conf" || echo "include $slurm/etc/plugstack.conf.d/*" >> "$slurm/etc/plugstack.conf"
mkdir -p "${PYXIS_RUNTIME_DIR:-/run/pyxis}"
cd /
rm -rf "$work"
if systemctl is-active --quiet slurmd; then
    echo "restarting slurmd so it loads the pyxis plugin"
    systemctl restart slurmd
fi
echo "enroot and pyxis ready (software stack $SOFTWARE_VERSION)"
