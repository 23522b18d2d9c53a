import { defineConfig } from "vitest/config";

// Three projects: the infrastructure package (Pulumi mocks installed before any test file
// imports a component), the same on the real control plane and engine, and the exec gateway
// service (no Pulumi at all).
export default defineConfig({
  test: {
    // Two test files at a time on a 2-core machine (Vitest's default is one fewer than the cores):
    // the infra and gateway suites spend most of their time waiting on child processes (helm,
    // podman, istiod, image builds), so a second file uses the core the first leaves idle.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: "infra",
          include: ["test/**/*.test.ts", "policies/**/*.test.ts"],
          exclude: ["test/real/**"],
          setupFiles: ["testkit/harness/setup.ts"],
          // expect.poll's default (1 s) is too short on a shared 2-core machine.
          expect: { poll: { timeout: 15_000 } },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The real Kubernetes control plane, Pulumi engine and Helm, built from their Go modules
        // (scripts/realcp) and started once for these suites, each of which works in namespaces,
        // stacks and releases of its own on it (real-node.test.ts starts a control plane of its
        // own). Two files at a time: much of their time is waiting (rollouts, and a namespace's
        // deletion, which the namespace controller retries after the longest grace period of the
        // pods it still holds: k8s.io/kubernetes pkg/controller/namespace/deletion/
        // namespaced_resources_deleter.go, estimateGracefulTermination), so the second file fills
        // it: 445 s against 790 s one after the other in one run here. `npm test` runs this project after the other two, so that their
        // terminal tests, which wait on screens, do not share two cores with control planes.
        test: {
          name: "real",
          include: ["test/real/**/*.test.ts"],
          globalSetup: ["test/real/global-setup.ts"],
          fileParallelism: true,
          // expect.poll's default (1 s) is too short on a shared 2-core machine.
          expect: { poll: { timeout: 15_000 } },
          testTimeout: 1_200_000,
          hookTimeout: 3_600_000,
        },
      },
      {
        test: {
          name: "gateway",
          include: ["gateway/test/**/*.test.ts", "testkit/**/*.test.ts"],
          // expect.poll's default (1 s) is too short on a shared 2-core machine.
          expect: { poll: { timeout: 15_000 } },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
