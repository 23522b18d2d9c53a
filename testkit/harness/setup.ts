// Vitest setup for the infrastructure suites: installs the offline Pulumi runtime before any
// test file imports a component, so resources register against recording mocks.
import { installOfflineRuntime, isOfflineRuntimeInstalled } from "../offline/runtime";

if (!isOfflineRuntimeInstalled()) {
  await installOfflineRuntime({ project: "entryway", stack: "test" });
}
