#!/usr/bin/env bash
# Builds the exec gateway and ssh workspace images under the chart's default references and loads
# them into the kind cluster (nothing is pulled from or pushed to a registry).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CLUSTER=${CLUSTER:-entryway-e2e}
# The chart's default references, as Chart.yaml lists them (a test keeps that list equal to the
# rendered defaults).
image_of() { grep -oE "ghcr\.io/entryway/$1:[^ ]+" "$E2E_ROOT/charts/entryway/Chart.yaml" | head -1; }
gateway_image=$(image_of exec-gateway)
workspace_image=$(image_of ssh-workspace)
[[ -n $gateway_image && -n $workspace_image ]] || die "Chart.yaml's artifacthub.io/images names no exec-gateway or ssh-workspace image"
docker build -t "$gateway_image" -f "$E2E_ROOT/gateway/Dockerfile" "$E2E_ROOT"
docker build -t "$workspace_image" "$E2E_ROOT/images/ssh-workspace"
kind load docker-image --name "$CLUSTER" "$gateway_image" "$workspace_image"
