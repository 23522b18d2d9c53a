/**
 * `entryway-no-default-admin-password`: its good fixtures (it passes them) and bad ones (it fires
 * on each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { appContainer, deployment } from "../../test/policies/fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD, noDefaultAdminPassword } from "./no-default-admin-password";

describe("the default AnsibleForms admin password never appears", () => {
  const fromSecret = { name: "ADMIN_PASSWORD", valueFrom: { secretKeyRef: { name: "keys", key: "admin-password" } } };
  it("passes an app whose ADMIN_PASSWORD comes from a Secret", async () => {
    expect(
      await runResourcePolicy(noDefaultAdminPassword, asResource(deployment([appContainer([fromSecret])]))),
    ).toEqual([]);
  });
  it.each([
    [
      "in a Secret's stringData",
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "k", namespace: "ns" },
        stringData: { "admin-password": DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD },
      },
    ],
    [
      "base64 in a Secret's data",
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "k", namespace: "ns" },
        data: { p: Buffer.from(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD).toString("base64") },
      },
    ],
    [
      "in a ConfigMap",
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "c", namespace: "ns" },
        data: { seed: `password: ${DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD}` },
      },
    ],
  ])("fires on it %s", async (_name, object) => {
    expect((await runResourcePolicy(noDefaultAdminPassword, asResource(object))).join()).toMatch(
      /default AnsibleForms admin password/,
    );
  });
  it("fires on an app without ADMIN_PASSWORD (the default applies) or with a literal one", async () => {
    expect(
      (await runResourcePolicy(noDefaultAdminPassword, asResource(deployment([appContainer([])])))).join(),
    ).toMatch(/ADMIN_PASSWORD is unset/);
    const literal = deployment([appContainer([{ name: "ADMIN_PASSWORD", value: "something-else" }])]);
    expect((await runResourcePolicy(noDefaultAdminPassword, asResource(literal))).join()).toMatch(
      /must come from a Secret/,
    );
  });
});
