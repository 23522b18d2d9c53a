/**
 * `entryway-seed-token-references`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { seedCredentials } from "./seed-token-references";

describe("seed credentials reference token variables only", () => {
  const seedMap = (text: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "seed", namespace: "ns" },
    data: { "seed.yaml": text },
  });
  const seed = (token: string) => `runners:\n  items:\n  - name: rte\n    token: ${token}\n    type: rte\nversion: 1\n`;
  it("passes ${RTE_TOKEN} and a secretEnv token, and ignores other ConfigMaps", async () => {
    expect(await runResourcePolicy(seedCredentials, asResource(seedMap(seed("${RTE_TOKEN}"))))).toEqual([]);
    expect(await runResourcePolicy(seedCredentials, asResource(seedMap(seed("'${AWX_TOKEN}'"))))).toEqual([]);
    expect(
      await runResourcePolicy(
        seedCredentials,
        asResource({ ...seedMap("x: ${ENCRYPTION_SECRET}"), data: { "app.conf": "x: ${ENCRYPTION_SECRET}" } }),
      ),
    ).toEqual([]);
  });
  it.each([
    [
      "the encryption secret",
      seed("${ENCRYPTION_SECRET}"),
      /references \$\{ENCRYPTION_SECRET\}; seed credentials may reference only token variables/,
    ],
    ["the database password", seed("${DB_PASSWORD}"), /references \$\{DB_PASSWORD\}/],
    ["the app's metrics token", seed("${METRICS_TOKEN}"), /references \$\{METRICS_TOKEN\}/],
    ["a literal", seed("abcdefghijklmnopqrstuvwxyz"), /token is a literal/],
  ])("fires on %s", async (_name, text, message) => {
    expect((await runResourcePolicy(seedCredentials, asResource(seedMap(text)))).join("\n")).toMatch(message);
  });
});
