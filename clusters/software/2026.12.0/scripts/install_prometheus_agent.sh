#!/bin/bash
# Prometheus in agent mode on the head node (controller on HyperPod): scrapes every Slurm node's
# exporters (the node list comes from sinfo, refreshed each minute) and remote-writes to the
# organization's Amazon Managed Service for Prometheus workspace, signed with the node's role (SigV4).
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

if [[ -z "${AMP_REMOTE_WRITE_URL:-}" ]]; then
    echo "no observability stack for this organization: metrics stay on the nodes"
    exit 0
fi
release="${PROMETHEUS_VERSION#v}"
arch="$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')"
if [[ ! -x /opt/prometheus/prometheus ]]; then
    curl -fsSL "https://github.com/prometheus/prometheus/releases/download/${PROMETHEUS_VERSION}/prometheus-${release}.linux-${arch}.tar.gz" \
        | tar -xz -C /opt
    ln -sfn "/opt/prometheus-${release}.linux-${arch}" /opt/prometheus
fi
mkdir -p /etc/prometheus /var/lib/prometheus
cat > /etc/prometheus/prometheus.yml <<CONF
global:
  scrape_interval: 60s
  external_labels:
    cluster: ${CLUSTER_NAME}
    geniac_cluster_id: "${PORTAL_CLUSTER_ID:-}"
scrape_configs:
  - job_name: nodes
    file_sd_configs:
      - files: [/etc/prometheus/targets.json]
remote_write:
  - url: ${AMP_REMOTE_WRITE_URL}
    sigv4:
      region: ${AWS_REGION}
CONF
cat > /usr/local/bin/geniac-prometheus-targets <<TARGETS
#!/bin/bash
set -euo pipefail
ports="${NODE_EXPORTER_PORT} ${EFA_EXPORTER_PORT} ${DCGM_EXPORTER_PORT}"
hosts="\$(${SLURM_PREFIX:-/opt/slurm}/bin/sinfo -N -h -o %N | sort -u)"
python3 -c 'import json,sys; hosts=sys.argv[1].split(); ports=sys.argv[2].split(); print(json.dumps([{"targets":[h+":"+p for h in hosts for p in ports]}]))' "\$hosts" "\$ports" > /etc/prometheus/targets.json.new
mv /etc/prometheus/targets.json.new /etc/prometheus/targets.json
TARGETS
chmod 755 /usr/local/bin/geniac-prometheus-targets
/usr/local/bin/geniac-prometheus-targets || echo '[]' > /etc/prometheus/targets.json
cat > /etc/systemd/system/geniac-prometheus.service <<UNIT
[Unit]
Description=Prometheus agent (remote write to Amazon Managed Service for Prometheus)
After=network-online.target
[Service]
ExecStart=/opt/prometheus/prometheus --agent --config.file=/etc/prometheus/prometheus.yml --storage.agent.path=/var/lib/prometheus
Restart=always
[Install]
WantedBy=multi-user.target
UNIT
cat > /etc/systemd/system/geniac-prometheus-targets.service <<UNIT
[Unit]
Description=Refresh the Prometheus agent's node list from Slurm
[Service]
Type=oneshot
ExecStart=/usr/local/bin/geniac-prometheus-targets
UNIT
cat > /etc/systemd/system/geniac-prometheus-targets.timer <<UNIT
[Unit]
Description=Refresh the Prometheus agent's node list every minute
[Timer]
OnBootSec=1min
OnUnitActiveSec=1min
[Install]
WantedBy=timers.target
UNIT
systemctl daemon-reload
systemctl enable --now geniac-prometheus.service geniac-prometheus-targets.timer
