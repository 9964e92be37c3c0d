#!/bin/bash
# The portal's agent on the HyperPod Slurm controller (docs/DECISIONS.md 42 of the portal): HyperPod nodes are
# not SSM Run Command targets, so the portal queues its Slurm work (validation jobs, drains, the node listing)
# and this agent polls for it over HTTPS with the cluster's token. Installs geniac_agent.py and its systemd unit,
# writes /etc/geniac/agent.env from stack.env, and the token from the SSM parameter the portal writes
# (AGENT_TOKEN_PARAMETER, a SecureString the cluster's execution role may read; agent_token.sh, run again before
# each start of the unit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=/dev/null
source "$here/stack.env"
systemd_dir="${SYSTEMD_DIR:-/etc/systemd/system}"
config_dir="${GENIAC_CONFIG_DIR:-/etc/geniac}"

if [[ -z "${PORTAL_URL:-}" || -z "${PORTAL_CLUSTER_ID:-}" ]]; then
    echo "stack.env names no portal address or cluster id: the agent is not installed"
    exit 0
fi
install -d -m 0755 /opt/geniac/agent
install -m 0755 "$here/geniac_agent.py" /opt/geniac/agent/geniac_agent.py
install -m 0755 "$here/agent_token.sh" /opt/geniac/agent/agent_token.sh
install -d -m 0700 "$config_dir"
umask 077
cat > "$config_dir/agent.env" <<ENV
GENIAC_PORTAL_URL=${PORTAL_URL}
GENIAC_CLUSTER_ID=${PORTAL_CLUSTER_ID}
GENIAC_AGENT_TOKEN_FILE=${config_dir}/agent.token
GENIAC_AGENT_STATE_DIR=/var/lib/geniac-agent
AGENT_TOKEN_PARAMETER=${AGENT_TOKEN_PARAMETER:-}
AWS_REGION=${AWS_REGION}
ENV
GENIAC_CONFIG_DIR="$config_dir" AGENT_TOKEN_PARAMETER="${AGENT_TOKEN_PARAMETER:-}" AWS_REGION="${AWS_REGION:-}" \
    bash "$here/agent_token.sh"
install -m 0644 "$here/geniac-agent.service" "$systemd_dir/geniac-agent.service"
systemctl daemon-reload
systemctl enable --now geniac-agent.service
echo "geniac-agent installed: polls ${PORTAL_URL} for cluster ${PORTAL_CLUSTER_ID}"
