# Kubernetes v1.37.2's control plane as one multi-call binary (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler), its node (kubelet, kube-proxy) and kubectl, from k8s.io/kubernetes and go.etcd.io/etcd/server/v3.
# First build: about 15 minutes on 2 cores (module download and compile).
VERSION=v1.37.2

build() {
  # k8s.io/kubernetes's go.mod replaces every k8s.io staging module with ./staging/src/k8s.io/<name>;
  # a module that requires it must replace them with the published modules at v0.<minor>.<patch>.
  local kube_mod staging_version
  kube_mod=$(go mod download -json "k8s.io/kubernetes@$VERSION" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
  staging_version="v0.${VERSION#v1.}"
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#replace \1 => \1 '"$staging_version"'#p' "$kube_mod" >>go.mod
  grep -c '^replace ' go.mod
  go mod tidy
  local pkg=k8s.io/component-base/version minor=${VERSION#v1.}
  go build -trimpath -ldflags "-s -w -X $pkg.gitVersion=$VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean" -o "$out/bin/kube" .
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do ln -s kube "$out/bin/$name"; done
}
