#!/usr/bin/env bash
# ssh to a workspace through the CONNECT gateway with the built-in ProxyCommand
# (`entryway connect-proxy`), runs one command and checks its output.
#   GATEWAY        host:port of the CONNECT port
#   WORKSPACE      the workspace's host name (its Service's cluster DNS name)
#   SSH_USER       the workspace user
#   IDENTITY_FILE  the private key whose public key the workspace authorizes
#   KNOWN_HOSTS    optional: a known_hosts file to check the host key against (else the first
#                  key seen is accepted and kept in $E2E_DIR)
# Used by ssh-in-cluster.sh and, against the Istio gateway model, by test/e2e/scripts.test.ts.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${GATEWAY:?}" "${WORKSPACE:?}" "${SSH_USER:?}" "${IDENTITY_FILE:?}"
if [[ -n ${KNOWN_HOSTS:-} ]]; then
  host_keys=(-o "UserKnownHostsFile=$KNOWN_HOSTS" -o StrictHostKeyChecking=yes)
else
  host_keys=(-o "UserKnownHostsFile=$E2E_DIR/known_hosts" -o StrictHostKeyChecking=accept-new)
fi
output=$(ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=20 -o IdentitiesOnly=yes -i "$IDENTITY_FILE" \
  "${host_keys[@]}" -o "ProxyCommand=$ENTRYWAY connect-proxy $GATEWAY %h %p" \
  -p 22 "$SSH_USER@$WORKSPACE" 'echo "through-the-gateway $((6 * 7))"')
[[ $output == "through-the-gateway 42" ]] || die "ssh through $GATEWAY to $WORKSPACE printed '$output'"
echo "ssh through $GATEWAY to $SSH_USER@$WORKSPACE: ok"
