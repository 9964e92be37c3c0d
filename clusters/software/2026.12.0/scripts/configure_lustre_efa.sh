#!/bin/bash
# Lustre over EFA: when the storage stack's FSx for Lustre file system is EFA-enabled (LustreEfaEnabled, written
# into stack.env as FSX_EFA_ENABLED), set up this node's Lustre networking (LNet) on its EFA devices before the
# file system is mounted, so reads and writes go over EFA (and GPUDirect Storage where the node has it) instead
# of TCP. Runs before the mount: ParallelCluster's OnNodeStart on compute nodes (before ParallelCluster mounts
# its shared storage), mount_fsx.sh on HyperPod Slurm nodes, on_create_eks.sh on HyperPod EKS nodes.
#
# It never fails the node: an EFA-enabled file system still serves clients over TCP, so a node without EFA
# devices (a head node), with an EFA driver older than Lustre over EFA needs, or with a Lustre client that has
# no EFA network driver (kefalnd) mounts over TCP and says why here.
#
# Which devices (FSx for Lustre user guide, "Configuring EFA clients"): on an instance with 32 EFA devices
# (p5, p5e, p5en) every fourth, eight in all; elsewhere the first and the last. Each is an LNet network
# interface of the "efa" network with 32 peer credits, preferred over TCP.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# ParallelCluster downloads each custom action alone and passes the bundle's S3 prefix as $1.
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
if [[ -f "$here/stack.env" ]]; then
    # shellcheck source=/dev/null
    source "$here/stack.env"
fi

if [[ "${FSX_EFA_ENABLED:-false}" != true ]]; then
    echo "Lustre over EFA: the file system is not EFA-enabled; Lustre uses TCP"
    exit 0
fi

devices_dir="${EFA_DEVICES_DIR:-/sys/class/infiniband}"
min_driver="${EFA_MIN_DRIVER:-2.12.1}"
modprobe_conf="${LUSTRE_EFA_MODPROBE_CONF:-/etc/modprobe.d/geniac-lustre-efa.conf}"
lnet_conf="${LNET_CONF:-/etc/lnet.conf}"

efa_devices=()
for device in "$devices_dir"/*; do
    [[ -e "$device/device/driver" ]] || continue
    [[ "$(basename "$(readlink -f "$device/device/driver")")" == efa ]] || continue
    efa_devices+=("$(basename "$device")")
done
if (( ${#efa_devices[@]} == 0 )); then
    echo "Lustre over EFA: this node has no EFA device; Lustre uses TCP"
    exit 0
fi

driver="$(modinfo -F version efa 2>/dev/null | tr -cd '0-9.')" || driver=""
if [[ -z "$driver" || "$(printf '%s\n%s\n' "$min_driver" "$driver" | sort -V | head -n1)" != "$min_driver" ]]; then
    echo "Lustre over EFA: EFA driver ${driver:-unknown} is older than $min_driver, which Lustre over EFA needs; Lustre uses TCP"
    exit 0
fi

if lnetctl net show --net efa 2>/dev/null | grep -q '@efa'; then
    echo "Lustre over EFA: already configured"
    exit 0
fi

instance_type="${INSTANCE_TYPE:-}"
if [[ -z "$instance_type" ]]; then
    token="$(curl -fsS -X PUT http://169.254.169.254/latest/api/token \
        -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' 2>/dev/null)" || token=""
    instance_type="$(curl -fsS -H "X-aws-ec2-metadata-token: $token" \
        http://169.254.169.254/latest/meta-data/instance-type 2>/dev/null)" || instance_type=""
fi
family="${instance_type#ml.}"
family="${family%%.*}"

mapfile -t sorted < <(printf '%s\n' "${efa_devices[@]}" | sort)
chosen=()
case "$family" in
    p5|p5e|p5en)
        for (( i = 0; i < ${#sorted[@]}; i += 4 )); do chosen+=("${sorted[$i]}"); done ;;
    *)
        chosen+=("${sorted[0]}")
        if (( ${#sorted[@]} > 1 )); then chosen+=("${sorted[-1]}"); fi ;;
esac

# The interface that carries the node's default route stays LNet's TCP network (the file system's servers are
# reached by name over it; EFA is preferred once discovery has found their EFA addresses).
interface="$(ip -o -4 route show to default | awk '{print $5; exit}')"
if [[ -z "$interface" ]]; then
    echo "Lustre over EFA: no default route to find the TCP interface by; Lustre uses TCP"
    exit 0
fi

modprobe lnet
if ! modprobe kefalnd "ipif_name=$interface"; then
    echo "Lustre over EFA: this Lustre client has no EFA network driver (kefalnd); Lustre uses TCP"
    exit 0
fi
modprobe ksocklnd
lnetctl lnet configure
lnetctl net del --net tcp 2>/dev/null || true
lnetctl net add --net tcp --if "$interface"
for device in "${chosen[@]}"; do
    lnetctl net add --net efa --if "$device" --peer-credits 32
done
lnetctl set discovery 1
lnetctl udsp add --src efa --priority 0
modprobe lustre

# The same networks after a reboot: the EFA driver's option for the module loader, and LNet's configuration
# for the lnet service to import where the Lustre client ships one.
mkdir -p "$(dirname "$modprobe_conf")"
echo "options kefalnd ipif_name=$interface" > "$modprobe_conf"
lnetctl export --backup > "$lnet_conf" || echo "lnetctl export failed: after a reboot Lustre uses TCP until this runs again"
if systemctl list-unit-files lnet.service >/dev/null 2>&1; then
    systemctl enable lnet.service || true
fi
echo "Lustre over EFA: ${#chosen[@]} of ${#sorted[@]} EFA devices (${chosen[*]}) beside TCP on $interface (${instance_type:-instance type unknown})"
