# Istio's own config generation and analyzers, from the istio.io/istio module at one master commit
# (eed52ebb66ad, 2026-08-27, VERSION 1.31), all carrying that commit in istio's pkg/version:
#   bin/istiod-gateway-config          rendered manifests in, what istiod sends one gateway proxy out (JSON)
#   bin/istioctl                       for `istioctl analyze --use-kube=false` on the rendered files
#   bin/istio-analyze-with-workloads   istioctl analyze's analyzers, reading the files' Pods and Services too
#   share/charts/istio-discovery       Istio's own istiod chart from the module (its mesh config and its
#                                      sidecar injector's webhooks, rendered by the tests with helm)
#   bin/pilot-discovery, bin/pilot-agent  istiod and the proxy's agent, for a real Istio gateway pod on
#                                      the real node (with the envoy tool's upstream Envoy)
#   share/envoy_bootstrap_tmpl.json    the bootstrap template pilot-agent fills in for Envoy
#                                      (tools/packaging/common/envoy_bootstrap.json in the module)
#   share/charts/gateway               Istio's gateway chart (the environment test deploys a real gateway)
# First build: about 40 minutes on 2 cores shared with other Go builds (module download and compile).
VERSION=v0.0.0-20260827124520-eed52ebb66ad

build() {
  go mod tidy
  local pkg=istio.io/istio/pkg/version commit=${VERSION##*-}
  local ldflags="-s -w -X $pkg.buildVersion=1.31-dev+$commit -X $pkg.buildGitRevision=$commit -X $pkg.buildStatus=Clean -X $pkg.buildTag=$VERSION"
  go build -trimpath -ldflags "$ldflags" -o "$out/bin/" ./cmd/...
  go build -trimpath -ldflags "$ldflags" -o "$out/bin/istioctl" istio.io/istio/istioctl/cmd/istioctl
  go build -trimpath -ldflags "$ldflags" -o "$out/bin/" istio.io/istio/pilot/cmd/pilot-discovery istio.io/istio/pilot/cmd/pilot-agent
  local istio_dir
  istio_dir=$(go list -m -f '{{.Dir}}' istio.io/istio)
  mkdir -p "$out/share/charts"
  cp -r "$istio_dir/manifests/charts/istio-control/istio-discovery" "$istio_dir/manifests/charts/gateway" "$out/share/charts/"
  cp "$istio_dir/tools/packaging/common/envoy_bootstrap.json" "$out/share/envoy_bootstrap_tmpl.json"
  chmod -R u+w "$out/share/charts"
}
