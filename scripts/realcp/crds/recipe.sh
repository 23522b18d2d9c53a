# The CustomResourceDefinitions the stack's objects need, taken from their projects' Go modules (no
# build): Istio's (manifests/charts/base/files/crd-all.gen.yaml in istio.io/istio, the file Istio's
# base chart installs) and prometheus-operator's ServiceMonitor, PodMonitor and PrometheusRule
# (example/prometheus-operator-crd/ in github.com/prometheus-operator/prometheus-operator), into
# share/*.yaml for the tests to install into the API server before the stack.
VERSION=istio-20260827+prometheus-operator-v0.85.0
ISTIO=istio.io/istio@v0.0.0-20260827124520-eed52ebb66ad
PROMETHEUS_OPERATOR=github.com/prometheus-operator/prometheus-operator@v0.85.0

module_dir() { go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'; }

build() {
  local istio prometheus_operator
  istio=$(module_dir "$ISTIO")
  prometheus_operator=$(module_dir "$PROMETHEUS_OPERATOR")
  [ -n "$istio" ] && [ -n "$prometheus_operator" ] || { echo "go mod download gave no folder for $ISTIO or $PROMETHEUS_OPERATOR"; return 1; }
  mkdir -p "$out/share"
  cp "$istio/manifests/charts/base/files/crd-all.gen.yaml" "$out/share/istio.yaml"
  cat "$prometheus_operator/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    "$prometheus_operator/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml" \
    "$prometheus_operator/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" >"$out/share/prometheus-operator.yaml"
}
