#!/bin/bash
# The token of the portal's agent on a HyperPod Slurm controller, read from the SSM parameter the portal writes
# at launch and on each rotation (AGENT_TOKEN_PARAMETER, a SecureString). Run by install_agent.sh and before
# each start of geniac-agent.service, so a token written or rotated later reaches the agent at its next start
# (the agent stops when the portal refuses its token). Keeps the current file when the parameter cannot be read.
set -euo pipefail

config_dir="${GENIAC_CONFIG_DIR:-/etc/geniac}"
token_file="${GENIAC_AGENT_TOKEN_FILE:-$config_dir/agent.token}"
if [[ -z "${AGENT_TOKEN_PARAMETER:-}" || -z "${AWS_REGION:-}" ]]; then
    echo "no token parameter or region configured: $token_file is kept as it is"
    exit 0
fi
umask 077
if aws ssm get-parameter --region "$AWS_REGION" --name "$AGENT_TOKEN_PARAMETER" --with-decryption \
    --query Parameter.Value --output text > "$token_file.new" 2>/dev/null && [[ -s "$token_file.new" ]]; then
    mv "$token_file.new" "$token_file"
else
    rm -f "$token_file.new"
    echo "the token parameter $AGENT_TOKEN_PARAMETER cannot be read yet: $token_file is kept as it is"
fi
