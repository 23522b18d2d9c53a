import { defineConfig } from "vitest/config";

// Two projects: the infrastructure package (Pulumi mocks installed before any test file
// imports a component) and the exec gateway service (no Pulumi at all).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "infra",
          include: ["test/**/*.test.ts", "policies/**/*.test.ts"],
          setupFiles: ["test/harness/setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "gateway",
          include: ["gateway/test/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
