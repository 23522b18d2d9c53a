#!/usr/bin/env bash
# A kind cluster named entryway-e2e (Kubernetes of kind's default node image).
set -euo pipefail
CLUSTER=${CLUSTER:-entryway-e2e}
kind create cluster --name "$CLUSTER" --wait 180s
kubectl cluster-info --context "kind-$CLUSTER"
