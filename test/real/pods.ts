/** Pods for the suites on the real node (test/harness/node.ts). */
import type { V1Pod } from "@kubernetes/client-node";
import { BUSYBOX_IMAGE } from "../harness/node-images";

/** A pod spec that passes Pod Security `restricted`, as the stack's own targets are. */
export function restrictedPod(
  name: string,
  command: string[],
  extra: Partial<V1Pod["spec"]> = {},
  labels: Record<string, string> = { app: name },
): V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "app",
          image: BUSYBOX_IMAGE,
          imagePullPolicy: "IfNotPresent",
          command,
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
          readinessProbe: { exec: { command: ["cat", "/tmp/ready"] }, periodSeconds: 1 },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        },
      ],
      volumes: [{ name: "tmp", emptyDir: {} }],
      terminationGracePeriodSeconds: 1,
      ...extra,
    },
  };
}
