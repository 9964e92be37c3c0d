#!/bin/bash
# NCCL and the aws-ofi-nccl plugin, so all_reduce_perf uses EFA (NET/OFI) and never falls back to sockets.
# GPU nodes only. The AMIs every blueprint uses ship NCCL with CUDA and aws-ofi-nccl beside the EFA installer
# (docs/blueprints.md, "What the AMIs ship"): a node that has both uses them, rather than cloning and building
# NCCL on every boot (minutes of build, and internet egress from a private subnet). Jobs that need the stack's
# exact NCCL run it from their container image (geniac/nccl-tests carries the pinned NCCL). Where the AMI lacks
# them, or the stack asks for its pins everywhere (NCCL_BUILD=pinned in stack.env), the pinned versions are
# built against the EFA installer's libfabric.
set -euo pipefail

# stack.env (versions and cluster settings) sits next to this script in a HyperPod lifecycle prefix;
# ParallelCluster downloads each custom action alone, so it passes the S3 prefix as $1 instead.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "$here/stack.env" && "${1:-}" == s3://* ]]; then
    aws s3 cp "${1%/}/stack.env" "$here/stack.env"
fi
# shellcheck source=/dev/null
source "$here/stack.env"

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "no NVIDIA GPU: NCCL is not needed (Neuron nodes use the Neuron collectives)"
    exit 0
fi
cuda="${CUDA_HOME:-/usr/local/cuda}"
ami_ofi="${AMI_OFI_NCCL_PREFIX:-/opt/amazon/ofi-nccl}"
first() { local pattern="$1"; shift; find "$@" -maxdepth 1 -name "$pattern" 2>/dev/null | head -n 1 || true; }
ami_nccl="$(first 'libnccl.so*' "$cuda/lib" "$cuda/lib64" "$cuda/targets/x86_64-linux/lib")"
ami_plugin="$(first 'libnccl-net*.so' "$ami_ofi/lib" "$ami_ofi/lib64" "$ami_ofi/lib/x86_64-linux-gnu")"
if [[ "${NCCL_BUILD:-ami}" != pinned && -n "$ami_nccl" && -n "$ami_plugin" ]]; then
    echo "NCCL ($ami_nccl) and aws-ofi-nccl ($ami_plugin) shipped with the AMI: used, nothing built"
    nccl_lib="$(dirname "$ami_nccl")"
    ofi_lib="$(dirname "$ami_plugin")"
else
    nccl_prefix="/opt/nccl/${NCCL_VERSION}"
    ofi_prefix="/opt/aws-ofi-nccl/${AWS_OFI_NCCL_VERSION}"
    work="$(mktemp -d)"
    if [[ ! -f "$nccl_prefix/lib/libnccl.so" ]]; then
        echo "building NCCL $NCCL_VERSION (the AMI has none, or the stack asks for its pin)"
        git clone --depth 1 --branch "$NCCL_VERSION" https://github.com/NVIDIA/nccl.git "$work/nccl"
        make -C "$work/nccl" -j "$(nproc)" src.build CUDA_HOME="$cuda" BUILDDIR="$nccl_prefix"
    fi
    if [[ ! -f "$ofi_prefix/lib/libnccl-net.so" ]]; then
        release="${AWS_OFI_NCCL_VERSION#v}"
        curl -fsSL "https://github.com/aws/aws-ofi-nccl/releases/download/${AWS_OFI_NCCL_VERSION}/aws-ofi-nccl-${release}.tar.gz" \
            | tar -xz -C "$work"
        cd "$work/aws-ofi-nccl-${release}"
        ./configure --prefix="$ofi_prefix" --with-libfabric=/opt/amazon/efa --with-cuda="$cuda" --disable-tests
        make -j "$(nproc)" install
    fi
    rm -rf "$work"
    nccl_lib="$nccl_prefix/lib"
    ofi_lib="$ofi_prefix/lib"
fi
profile="${NCCL_PROFILE:-/etc/profile.d/geniac-nccl.sh}"
cat > "$profile" <<PROFILE
export LD_LIBRARY_PATH=$nccl_lib:$ofi_lib:/opt/amazon/efa/lib:\${LD_LIBRARY_PATH:-}
export FI_PROVIDER=efa
export FI_EFA_USE_DEVICE_RDMA=1
export NCCL_SOCKET_IFNAME=^docker,lo,veth
PROFILE
# The instance type's settings (stack.env, from the portal's table: the reference's P5 values), and
# aws-ofi-nccl's tuner where the stack asks for it and the plugin ships it.
for setting in ${NCCL_TUNED_ENV:-}; do
    echo "export $setting" >> "$profile"
done
tuner="$ofi_lib/libnccl-ofi-tuner.so"
[[ -f "$tuner" ]] || tuner="$ofi_lib/libnccl-net.so"
if [[ "${NCCL_OFI_TUNER:-0}" == 1 && -f "$tuner" ]]; then
    echo "export NCCL_TUNER_PLUGIN=$tuner" >> "$profile"
fi
