# Helm 4 and Helm 3 from helm.sh/helm/v4 and helm.sh/helm/v3 (one wrapper module each: they need
# different k8s.io module versions), as bin/helm4 and bin/helm3, with the version flags their
# Makefiles set. First build: about 6 minutes on 2 cores.
VERSION=v4.3.2+v3.21.4

build() {
  local major version ldflags client_go
  for major in 4 3; do
    (
      cd "v$major"
      go mod tidy
      version=$(go list -m -f '{{.Version}}' "helm.sh/helm/v$major")
      ldflags="-s -w -X helm.sh/helm/v$major/internal/version.version=$version -X helm.sh/helm/v$major/internal/version.gitTreeState=clean"
      if [ "$major" = 3 ]; then
        # Helm 3's Makefile derives the default Kubernetes version (template's .Capabilities.KubeVersion,
        # lint's deprecation checks) from the client-go it is built with: v0.36.x is Kubernetes 1.36.
        client_go=$(go list -m -f '{{.Version}}' k8s.io/client-go)
        client_go=${client_go#v0.}
        for pkg in pkg/lint/rules pkg/chartutil; do
          ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=${client_go%%.*}"
        done
      fi
      go build -trimpath -ldflags "$ldflags" -o "$out/bin/helm$major" "helm.sh/helm/v$major/cmd/helm"
    )
  done
}
