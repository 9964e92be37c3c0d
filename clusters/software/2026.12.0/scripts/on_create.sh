#!/bin/bash
# SageMaker HyperPod lifecycle entry point (OnCreate). HyperPod copies the whole lifecycle prefix to
# the node and runs this script from there: mount FSx for Lustre from provisioning_parameters.json,
# then run this node's group's scripts in the order stack.env lists, then start Slurm's daemon.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=/dev/null
source "$here/stack.env"
log_dir="${PROVISION_LOG_DIR:-/var/log/provision}"
systemd_dir="${SYSTEMD_DIR:-/etc/systemd/system}"
mkdir -p "$log_dir"
exec > >(tee -a "$log_dir/provisioning.log") 2>&1

params="$here/provisioning_parameters.json"
resource_config="${SAGEMAKER_RESOURCE_CONFIG_PATH:-/opt/ml/config/resource_config.json}"
[[ -f "$params" ]] || { echo "provisioning_parameters.json is missing from $here"; exit 1; }
[[ -f "$resource_config" ]] || { echo "$resource_config is missing: not a HyperPod node"; exit 1; }

read_param() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' "$params" "$1"; }
# This node's instance group: the group whose instance list holds one of this node's addresses.
group="$(python3 - "$resource_config" "$(hostname -I)" <<'PY'
import json, sys
config, addresses = json.load(open(sys.argv[1])), set(sys.argv[2].split())
for group in config.get("InstanceGroups", []):
    if any(i.get("CustomerIpAddress") in addresses for i in group.get("Instances", [])):
        print(group["Name"])
PY
)"
controller_group="$(read_param controller_group)"
echo "instance group: ${group:-unknown} (controller group: $controller_group)"

bash "$here/mount_fsx.sh" "$(read_param fsx_dns_name)" "$(read_param fsx_mountname)" "${FSX_MOUNT_POINT:-/fsx}"

if [[ "$group" == "$controller_group" ]]; then
    role=controller
    scripts="$HYPERPOD_CONTROLLER_SCRIPTS"
else
    role=worker
    scripts="$HYPERPOD_WORKER_SCRIPTS"
fi
for script in $scripts; do
    echo "running $script ($role)"
    bash "$here/$script"
done

# Configless Slurm: the controller serves slurm.conf and every worker's slurmd fetches it from there
# (--conf-server), so a worker needs no copy of its own and picks up the controller's changes. Each node runs
# only its own daemon: the other is masked, so neither a package update nor a reboot starts it.
if [[ "$role" == controller ]]; then
    slurm_conf="${SLURM_CONF:-/opt/slurm/etc/slurm.conf}"
    if [[ -f "$slurm_conf" ]] && ! grep -q '^SlurmctldParameters=.*enable_configless' "$slurm_conf"; then
        if grep -q '^SlurmctldParameters=' "$slurm_conf"; then
            sed -i 's/^SlurmctldParameters=.*/&,enable_configless/' "$slurm_conf"
        else
            echo "SlurmctldParameters=enable_configless" >> "$slurm_conf"
        fi
    fi
    systemctl disable --now slurmd 2>/dev/null || true
    systemctl mask slurmd
    systemctl enable --now slurmctld
else
    controller_ip="$(python3 - "$resource_config" "$controller_group" <<'PY'
import json, sys
config, wanted = json.load(open(sys.argv[1])), sys.argv[2]
for group in config.get("InstanceGroups", []):
    if group.get("Name") == wanted and group.get("Instances"):
        print(group["Instances"][0]["CustomerIpAddress"])
        break
PY
)"
    [[ -n "$controller_ip" ]] || { echo "no instance of the controller group $controller_group in $resource_config"; exit 1; }
    systemctl disable --now slurmctld 2>/dev/null || true
    systemctl mask slurmctld
    mkdir -p "$systemd_dir/slurmd.service.d"
    printf '[Service]\nEnvironment="SLURMD_OPTIONS=--conf-server %s"\n' "$controller_ip" \
        > "$systemd_dir/slurmd.service.d/geniac-configless.conf"
    systemctl daemon-reload
    systemctl enable --now slurmd
    echo "slurmd started configless from $controller_ip"
fi
echo "lifecycle complete: $role, software stack $SOFTWARE_VERSION"
