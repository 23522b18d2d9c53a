# Istio's own config generation and analyzers, from the istio.io/istio module at one master commit
# (eed52ebb66ad, 2026-08-27, VERSION 1.31), all carrying that commit in istio's pkg/version:
#   bin/istiod-gateway-config          rendered manifests in, what istiod sends one gateway proxy out (JSON)
#   bin/istioctl                       for `istioctl analyze --use-kube=false` on the rendered files
#   bin/istio-analyze-with-workloads   istioctl analyze's analyzers, reading the files' Pods and Services too
#   share/charts/istio-discovery       Istio's own istiod chart from the module (its mesh config and its
#                                      sidecar injector's webhooks, rendered by the tests with helm)
# First build: about 35 minutes on 2 cores shared with other Go builds (module download and compile).
VERSION=v0.0.0-20260827124520-eed52ebb66ad

build() {
  go mod tidy
  local pkg=istio.io/istio/pkg/version commit=${VERSION##*-}
  local ldflags="-s -w -X $pkg.buildVersion=1.31-dev+$commit -X $pkg.buildGitRevision=$commit -X $pkg.buildStatus=Clean -X $pkg.buildTag=$VERSION"
  go build -trimpath -ldflags "$ldflags" -o "$out/bin/" ./cmd/...
  go build -trimpath -ldflags "$ldflags" -o "$out/bin/istioctl" istio.io/istio/istioctl/cmd/istioctl
  mkdir -p "$out/share/charts"
  cp -r "$(go list -m -f '{{.Dir}}' istio.io/istio)/manifests/charts/istio-control/istio-discovery" "$out/share/charts/"
  chmod -R u+w "$out/share/charts"
}
