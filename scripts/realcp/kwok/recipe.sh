# kwok (sigs.k8s.io/kwok): fake nodes that the scheduler places pods on, and the Stages that take
# those pods to Running and Ready and bind PersistentVolumeClaims, with no kubelet. Its Stage files
# are copied from the module into share/stages/ (node: initialize and lease heartbeat; pod: the
# general lifecycle; volume: the kwok-volume StorageClass provisioner). First build: about 4 minutes.
VERSION=v0.8.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$out/bin/kwok" sigs.k8s.io/kwok/cmd/kwok
  local module stage
  module=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  mkdir -p "$out/share/stages" "$out/share/objects"
  for stage in node/fast node/heartbeat-with-lease pod/general volume/fast; do
    for file in "$module/kustomize/stage/$stage"/*.yaml; do
      case "$(basename "$file")" in
        kustomization.yaml) ;;
        storage-class.yaml) cp "$file" "$out/share/objects/" ;;
        *) cp "$file" "$out/share/stages/${stage//\//-}-$(basename "$file")" ;;
      esac
    done
  done
}
