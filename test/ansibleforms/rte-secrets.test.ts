/**
 * An RTE reads no Secret but its own token and metrics token (and, in the deprecated database mode,
 * the database password), in both front ends and the policy pack (issue 33): its sshSecret, the one
 * Secret it mounts, is never one the app or its own variables read (mounted whole, the app's keys
 * Secret gives ENCRYPTION_SECRET and ADMIN_PASSWORD), and an extraEnv is a plain value, never a
 * Secret's. What either front end renders passes entryway-rte-boundary.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig, Stack } from "../../components/stack";
import { RemoteRte } from "../../components/ansibleforms";
import { rteBoundary } from "../../policies/rules/rte-boundary";
import { chartValues } from "../foundation/chart-values";
import { helmBinaries } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import { asResource, runResourcePolicy } from "../policies/run-policies";
import { parseAllDocuments } from "yaml";
import type { ObjectLike } from "../../testkit/harness/validate";

const { templateResult } = chartValues("rte-secrets");

const existingSecrets = { keys: "forms-keys", database: "forms-db", rteToken: "forms-rte-token" };
const metrics = { enabled: true, existingSecret: "forms-metrics", rteExistingSecret: "forms-rte-metrics" };
const forms = (rte: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ansibleForms: { enabled: true, existingSecrets, metrics, rte, ...extra },
});
const remote = (extra: Record<string, unknown>) => ({
  remoteRte: { enabled: true, appUrl: "https://forms.example.com", existingTokenSecret: "rte-token", ...extra },
});

/** Each Secret an RTE must not mount as its sshSecret, and what it is. */
const FOREIGN: [string, Record<string, unknown>][] = [
  ["the app's keys Secret", forms({ sshSecret: "forms-keys" })],
  ["the database's Secret", forms({ sshSecret: "forms-db" })],
  ["the token's Secret", forms({ sshSecret: "forms-rte-token" })],
  ["the app's metrics Secret", forms({ sshSecret: "forms-metrics" })],
  ["its own metrics Secret", forms({ sshSecret: "forms-rte-metrics" })],
  [
    "a secretEnv's Secret of the app's",
    forms({ sshSecret: "awx" }, { secretEnv: [{ name: "AWX_TOKEN", secretName: "awx", key: "token" }] }),
  ],
  ["the database Secret (database mode)", forms({ mode: "database", sshSecret: "forms-db" })],
  ["a remote RTE's token Secret", remote({ sshSecret: "rte-token" })],
];
const OWN_SSH: [string, Record<string, unknown>][] = [
  ["the sidecar", forms({ sshSecret: "rte-ssh" })],
  ["the database-mode RTE", forms({ mode: "database", sshSecret: "rte-ssh" })],
  ["a remote RTE", remote({ sshSecret: "rte-ssh", metrics: { enabled: true, existingSecret: "rte-metrics" } })],
];

/** The entryway-rte-boundary violations of every object, as the engine would report them. */
async function rteViolations(objects: readonly ObjectLike[]): Promise<string[]> {
  const found: string[] = [];
  for (const o of objects) {
    if (o.apiVersion) found.push(...(await runResourcePolicy(rteBoundary, asResource(o as never))));
  }
  return found;
}
const hasRte = (objects: readonly ObjectLike[]) => JSON.stringify(objects).includes("ansibleforms-rte-");

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("chart (%s)", (_label, helm) => {
  const template = (values: unknown, extra: string[] = []) => templateResult(helm, values, extra);

  it.each(FOREIGN)("refuses an sshSecret that is %s", (_what, values) => {
    const result = template(values);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/sshSecret \S+ is a Secret the RTE's token or the app also reads/);
  });

  it("refuses an extraEnv from a Secret, even with the schema skipped", () => {
    const stolen = {
      name: "ANSIBLE_VAULT_PASS",
      valueFrom: { secretKeyRef: { name: "forms-keys", key: "encryption-secret" } },
    };
    for (const values of [forms({ extraEnv: [stolen] }), remote({ extraEnv: [stolen] })]) {
      expect(template(values).ok).toBe(false);
      const skipped = template(values, ["--skip-schema-validation"]);
      expect(skipped.ok).toBe(false);
      expect(skipped.output).toMatch(/extraEnv ANSIBLE_VAULT_PASS: a plain value only/);
    }
  });

  it.each(OWN_SSH)("renders %s with an ssh Secret of its own, which the policy passes", async (_what, values) => {
    const result = template(values);
    expect(result.ok, result.output).toBe(true);
    const objects = parseAllDocuments(result.output)
      .map((d) => d.toJS() as ObjectLike | null)
      .filter((o): o is ObjectLike => o !== null);
    expect(hasRte(objects)).toBe(true);
    expect(await rteViolations(objects)).toEqual([]);
  });
});

describe("components", () => {
  const stack = (values: Record<string, unknown>) =>
    render(() => {
      const { ansibleForms, remoteRte } = values as {
        ansibleForms?: Record<string, unknown>;
        remoteRte?: Record<string, unknown>;
      };
      const strip = (o?: Record<string, unknown>) => {
        if (!o) return undefined;
        const { enabled: _enabled, ...rest } = o;
        return rest;
      };
      new Stack(
        "s",
        parseStackConfig({
          namespace: "entryway",
          ...(ansibleForms ? { ansibleForms: strip(ansibleForms) } : {}),
          ...(remoteRte ? { remoteRte: strip(remoteRte) } : {}),
        }),
      );
    });

  it.each(FOREIGN)("refuse an sshSecret that is %s", async (_what, values) => {
    await expect(stack(values)).rejects.toThrow(/sshSecret \S+ is a Secret the RTE's token or the app also reads/);
  });

  it("refuse an extraEnv from a Secret (the stack config's schema, and the component for a JavaScript caller)", async () => {
    const stolen = {
      name: "ANSIBLE_VAULT_PASS",
      valueFrom: { secretKeyRef: { name: "forms-keys", key: "encryption-secret" } },
    };
    expect(() =>
      parseStackConfig({
        namespace: "entryway",
        remoteRte: { ...remote({}).remoteRte, enabled: undefined, extraEnv: [stolen] },
      }),
    ).toThrow(/extraEnv/);
    await expect(
      render(
        () =>
          new RemoteRte("r", {
            namespace: "rte",
            appUrl: "https://forms.example.com",
            existingTokenSecret: "rte-token",
            extraEnv: [stolen as never],
          }),
      ),
    ).rejects.toThrow(/extraEnv ANSIBLE_VAULT_PASS: a plain value only/);
  });

  it.each(OWN_SSH)("render %s with an ssh Secret of its own, which the policy passes", async (_what, values) => {
    const { manifests } = await stack(values);
    expect(hasRte(manifests as ObjectLike[])).toBe(true);
    expect(await rteViolations(manifests as ObjectLike[])).toEqual([]);
  });
});
