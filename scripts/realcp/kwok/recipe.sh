# kwok (sigs.k8s.io/kwok): fake nodes that the scheduler places pods on, and the Stages that take
# those pods to Running and Ready and bind PersistentVolumeClaims, with no kubelet. Its own Stage
# files (kustomize/stage/ in the module: node initialize and lease heartbeat, the general pod
# lifecycle, the kwok-volume provisioner) are joined into share/stages.yaml for `kwok --config`, and
# the objects they expect in the cluster (the kwok-volume StorageClass, the RBAC of its volume
# stages) into share/objects.yaml. First build: about 4 minutes on 2 cores.
VERSION=v0.8.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$out/bin/kwok" sigs.k8s.io/kwok/cmd/kwok
  local module stage file target
  module=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  mkdir -p "$out/share"
  for stage in node/fast node/heartbeat-with-lease pod/general volume/fast volume/rbac; do
    for file in "$module/kustomize/stage/$stage"/*.yaml; do
      [ "$(basename "$file")" = kustomization.yaml ] && continue
      if grep -q '^kind: Stage$' "$file"; then target=stages.yaml; else target=objects.yaml; fi
      { echo "---"; cat "$file"; } >>"$out/share/$target"
    done
  done
}
