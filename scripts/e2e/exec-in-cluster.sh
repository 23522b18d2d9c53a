#!/usr/bin/env bash
# An exec through the chart's exec gateway (port-forwarded) into a pod of the target namespace,
# as a ServiceAccount that may exec there (the kubernetes authorizer asks TokenReview and
# SubjectAccessReview).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
target_ns=entryway-e2e-target
workspace_image=$(kubectl -n "$NAMESPACE" get statefulset "$RELEASE-ws-e2e" -o jsonpath='{.spec.template.spec.containers[0].image}')
kubectl apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: { name: e2e-target, namespace: $target_ns }
spec:
  automountServiceAccountToken: false
  securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: RuntimeDefault } }
  containers:
    - name: app
      image: $workspace_image
      command: ["sleep", "3600"]
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: e2e-user, namespace: $target_ns }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: e2e-exec, namespace: $target_ns }
rules:
  - { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }
  - { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-exec, namespace: $target_ns }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: e2e-exec }
subjects: [{ kind: ServiceAccount, name: e2e-user, namespace: $target_ns }]
YAML
kubectl -n "$target_ns" wait --for=condition=Ready pod/e2e-target --timeout=120s
kubectl -n "$target_ns" create token e2e-user >"$E2E_DIR/token"
forward "$RELEASE-exec-gateway" 18080 80
GATEWAY_URL=ws://127.0.0.1:18080/v1/enter TOKEN_FILE="$E2E_DIR/token" TARGET="$target_ns/e2e-target/app" \
  "$E2E_ROOT/scripts/e2e/exec-through-gateway.sh"
