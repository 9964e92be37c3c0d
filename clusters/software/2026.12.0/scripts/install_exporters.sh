#!/bin/bash
# The exporters the portal's GPU health summary reads: DCGM exporter (GPU nodes), EFA exporter and
# node exporter, each a container on the host network. The head node's Prometheus agent scrapes
# them and remote-writes to the organization's Amazon Managed Service for Prometheus workspace.
# dcgm-exporter runs with the stack's counters file (dcgm-counters.csv, -f): its default counters leave out
# fields the portal reads (thermal and power violation, ECC, NVLink bandwidth, the XID count).
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ "${1:-}" == s3://* ]]; then
    for file in stack.env dcgm-counters.csv; do
        [[ -f "$here/$file" ]] || aws s3 cp "${1%/}/$file" "$here/$file"
    done
fi
# shellcheck source=/dev/null
source "$here/stack.env"

run() {
    local name="$1"; shift
    docker rm -f "$name" >/dev/null 2>&1 || true
    docker run -d --restart always --name "$name" --net host "$@"
}
ecr="602401143452.dkr.ecr.${AWS_REGION}.amazonaws.com"
aws ecr get-login-password --region "$AWS_REGION" | docker login --username AWS --password-stdin "$ecr" || true
run node-exporter --pid host -v /:/host:ro,rslave "quay.io/prometheus/node-exporter:${NODE_EXPORTER_VERSION}" \
    --path.rootfs=/host --web.listen-address=":${NODE_EXPORTER_PORT}"
if [[ -d /sys/class/infiniband ]]; then
    run efa-exporter --pid host -v /:/host:ro,rslave "$ecr/hyperpod/efa_exporter:${EFA_EXPORTER_VERSION}" \
        --path.rootfs=/host --web.listen-address=":${EFA_EXPORTER_PORT}" --collector.disable-defaults --collector.amazonefa
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    counters_dir="${DCGM_COUNTERS_DIR:-/etc/dcgm-exporter}"
    mkdir -p "$counters_dir"
    install -m 0644 "$here/dcgm-counters.csv" "$counters_dir/geniac-counters.csv"
    run dcgm-exporter --gpus all --cap-add SYS_ADMIN -v "$counters_dir:/etc/dcgm-exporter:ro" \
        "nvcr.io/nvidia/k8s/dcgm-exporter:${DCGM_EXPORTER_VERSION}" \
        -a ":${DCGM_EXPORTER_PORT}" -f /etc/dcgm-exporter/geniac-counters.csv
else
    echo "no NVIDIA GPU: DCGM exporter skipped"
fi
