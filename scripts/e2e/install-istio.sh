#!/usr/bin/env bash
# Istio from its Helm charts (https://istio.io/latest/docs/setup/install/helm/): base (CRDs) and
# istiod. The chart brings its own CONNECT gateway (injected with Istio's gateway template), so
# Istio's gateway chart is not needed.
set -euo pipefail
ISTIO_VERSION=${ISTIO_VERSION:-1.26.2}
helm repo add istio https://istio-release.storage.googleapis.com/charts --force-update
helm upgrade --install istio-base istio/base -n istio-system --create-namespace --version "$ISTIO_VERSION" --wait
helm upgrade --install istiod istio/istiod -n istio-system --version "$ISTIO_VERSION" --wait
kubectl -n istio-system rollout status deployment/istiod --timeout=180s
