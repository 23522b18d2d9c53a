# kube-network-policies (sigs.k8s.io/kube-network-policies), the NetworkPolicy implementation of the
# environment test's node: it drops the packets a policy denies. Chosen over kube-router (v2.1.0, the
# version served here, has reported security flaws) and Calico's felix (a far larger build and
# datastore): it is the Kubernetes SIG's own, one binary, nftables plus an NFQUEUE verdict per new flow.
# nfqueue-target.patch (ours, applied to the downloaded module at build time) replaces nftables'
# `queue` expression, which needs the nft_queue kernel module that this kernel lacks, with the same
# verdict as the xtables NFQUEUE target (revision 3) through nft_compat, which it has.
#   bin/kube-network-policies
# First build: about 5 minutes on 2 cores.
VERSION=v0.8.0

build() {
  local mod
  mod=$(go mod download -json "sigs.k8s.io/kube-network-policies@$VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  cp -r "$mod" module
  chmod -R u+w module
  patch -d module -p1 <nfqueue-target.patch
  (cd module && go build -trimpath -ldflags "-s -w" -o "$out/bin/kube-network-policies" ./cmd)
}
