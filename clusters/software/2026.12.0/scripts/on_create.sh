#!/bin/bash
# SageMaker HyperPod lifecycle entry point (OnCreate). HyperPod copies the whole lifecycle prefix to
# the node and runs this script from there: mount FSx for Lustre from provisioning_parameters.json,
# then run this node's group's scripts in the order stack.env lists, then start Slurm's daemon.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=/dev/null
source "$here/stack.env"
mkdir -p /var/log/provision
exec > >(tee -a /var/log/provision/provisioning.log) 2>&1

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

bash "$here/mount_fsx.sh" "$(read_param fsx_dns_name)" "$(read_param fsx_mountname)" /fsx

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

if [[ "$role" == controller ]]; then
    systemctl enable --now slurmctld
else
    systemctl enable --now slurmd
fi
echo "lifecycle complete: $role, software stack $SOFTWARE_VERSION"
