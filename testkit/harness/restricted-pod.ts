/**
 * Pods for the real node's tests that pass Pod Security `restricted` (the control plane's default
 * level: control-plane.ts): busybox targets and probes.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { BUSYBOX_IMAGE, PAUSE_IMAGE } from "./node-images";

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

/** A pod with no shell and no tools at all (the pause image), under Pod Security `restricted`: a target for debug containers. */
export function distrolessPod(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65535,
        runAsGroup: 65535,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "app",
          image: PAUSE_IMAGE,
          imagePullPolicy: "IfNotPresent",
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
        },
      ],
      terminationGracePeriodSeconds: 1,
    },
  };
}
