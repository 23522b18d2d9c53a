# CoreDNS, the cluster DNS of the environment test (in-cluster names of Services and pods resolve as
# on a real cluster), from github.com/coredns/coredns with the plugins kubeadm's Corefile uses (main.go).
#   bin/coredns
# First build: about 5 minutes on 2 cores.
VERSION=v1.15.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$VERSION" -o "$out/bin/coredns" .
  "$out/bin/coredns" -version
}
