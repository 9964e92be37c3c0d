#!/bin/bash
# Mount FSx for Lustre: mount_fsx.sh <dns name> <mount name> <mount point>. Persisted in fstab with
# systemd automount so a rebooted (or replaced, with HyperPod node recovery) node mounts it again.
set -euo pipefail

dns_name="${1:-}"
mount_name="${2:-}"
mount_point="${3:-/fsx}"
if [[ -z "$dns_name" || -z "$mount_name" ]]; then
    echo "usage: $0 <fsx dns name> <fsx mount name> [mount point]"
    exit 1
fi
mkdir -p "$mount_point"
entry="$dns_name@tcp:/$mount_name $mount_point lustre defaults,noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network-online.target 0 0"
grep -qsF "$dns_name@tcp:/$mount_name" /etc/fstab || echo "$entry" >> /etc/fstab
systemctl daemon-reload
mountpoint -q "$mount_point" || mount "$mount_point"
chmod 1777 "$mount_point"
