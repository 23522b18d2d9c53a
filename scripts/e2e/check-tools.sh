#!/usr/bin/env bash
# The tools the end-to-end run needs, on PATH (GitHub's ubuntu-24.04 runner image carries them).
set -euo pipefail
missing=()
for tool in docker kind kubectl helm pulumi ssh ssh-keygen openssl; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
  echo "e2e: missing tools: ${missing[*]}" >&2
  exit 1
fi
kind version
helm version --short
kubectl version --client
pulumi version
