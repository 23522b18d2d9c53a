#!/usr/bin/env bash
# A shell in a container through the exec gateway (`entryway enter`): types one command and
# checks that a real shell ran it.
#   GATEWAY_URL  the gateway's WebSocket URL (ws://host:port/v1/enter)
#   TOKEN_FILE   a file holding the caller's token
#   TARGET       namespace/pod[/container]
# Used by exec-in-cluster.sh and, against a gateway with a stand-in API server, by
# test/e2e/scripts.test.ts.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${GATEWAY_URL:?}" "${TOKEN_FILE:?}" "${TARGET:?}"
# Piped in, so `entryway enter` runs the shell without a TTY (pipe mode); only the evaluation of
# "$((6 * 7))" prints 42.
# shellcheck disable=SC2016 # the remote shell expands it
output=$(printf 'echo "through-the-gateway $((6 * 7))"\nexit 0\n' | $ENTRYWAY enter --gateway "$GATEWAY_URL" --token-file "$TOKEN_FILE" "$TARGET")
grep -q "through-the-gateway 42" <<<"$output" || die "enter $TARGET through $GATEWAY_URL printed: $output"
echo "exec through $GATEWAY_URL into $TARGET: ok"
