#!/bin/bash
# Mount FSx for Lustre: mount_fsx.sh <dns name> <mount name> <mount point>. Persisted in fstab with
# systemd automount so a rebooted (or replaced, with HyperPod node recovery) node mounts it again.
# Lustre's kernel modules are loaded first, and the mount is retried with a growing wait: on a node that has
# just booted the network (or the file system's DNS name) may not answer yet, and one failed try under set -e
# would fail the whole lifecycle and the node with it.
set -euo pipefail

dns_name="${1:-}"
mount_name="${2:-}"
mount_point="${3:-/fsx}"
attempts="${FSX_MOUNT_ATTEMPTS:-6}"
delay="${FSX_MOUNT_FIRST_DELAY:-5}"
fstab="${FSTAB:-/etc/fstab}"
if [[ -z "$dns_name" || -z "$mount_name" ]]; then
    echo "usage: $0 <fsx dns name> <fsx mount name> [mount point]"
    exit 1
fi
# An EFA-enabled file system: LNet on the node's EFA devices first (a no-op otherwise; never fails the node).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -f "$here/configure_lustre_efa.sh" ]]; then
    bash "$here/configure_lustre_efa.sh"
fi
for module in lnet lustre; do
    modprobe "$module" || echo "modprobe $module failed: the mount below says whether Lustre is usable"
done
mkdir -p "$mount_point"
entry="$dns_name@tcp:/$mount_name $mount_point lustre defaults,noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network-online.target 0 0"
grep -qsF "$dns_name@tcp:/$mount_name" "$fstab" || echo "$entry" >> "$fstab"
systemctl daemon-reload
attempt=1
until mountpoint -q "$mount_point" || mount "$mount_point"; do
    if (( attempt >= attempts )); then
        echo "FSx for Lustre $dns_name@tcp:/$mount_name did not mount at $mount_point after $attempts attempts"
        exit 1
    fi
    echo "mount of $mount_point failed (attempt $attempt of $attempts): retrying in ${delay}s"
    sleep "$delay"
    attempt=$((attempt + 1))
    delay=$((delay * 2))
done
chmod 1777 "$mount_point"
echo "FSx for Lustre mounted at $mount_point (attempt $attempt)"
