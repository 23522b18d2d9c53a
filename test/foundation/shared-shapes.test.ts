/**
 * The shapes in components/shared/ that several settings take (NetworkPolicy peers, egress rules
 * and ports; a key in an existing Secret), as the stack config's schema checks them: the same
 * rules wherever they appear.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../components/stack";

const base = { namespace: "entryway" };
const workspaceEgress = (egress: unknown) => ({
  ...base,
  workspaces: [{ name: "alice", authorizedKeysSecret: { name: "keys" }, egress }],
});
const formsEgress = (allowEgressTo: unknown) => ({ ...base, ansibleForms: { allowEgressTo } });

describe("the shared NetworkPolicy shapes", () => {
  it("take a port range, a port-less rule of one protocol and SCTP in every setting", () => {
    for (const config of [workspaceEgress, formsEgress]) {
      expect(() => parseStackConfig(config([{ ports: [{ port: 1000, endPort: 2000 }] }]))).not.toThrow();
      expect(() =>
        parseStackConfig(config([{ to: [{ ipBlock: { cidr: "10.0.0.0/8" } }], ports: [{ protocol: "UDP" }] }])),
      ).not.toThrow();
      expect(() => parseStackConfig(config([{ ports: [{ port: 9899, protocol: "SCTP" }] }]))).not.toThrow();
      expect(() => parseStackConfig(config([{ to: [{ namespaceSelector: {} }] }]))).not.toThrow();
    }
  });

  it("refuse what Kubernetes refuses: an endPort without a port, a peer with nothing in it", () => {
    for (const config of [workspaceEgress, formsEgress]) {
      expect(() => parseStackConfig(config([{ ports: [{ endPort: 2000 }] }]))).toThrow(
        /ports\/0 must have required property 'port'/,
      );
      expect(() => parseStackConfig(config([{ to: [{}] }]))).toThrow(/to\/0 must NOT have fewer than 1 properties/);
      expect(() => parseStackConfig(config([{ ports: [{ port: 80, protocol: "ICMP" }] }]))).toThrow(
        /protocol must be equal to one of the allowed values/,
      );
    }
  });
});

describe("the shared SecretKeyRef", () => {
  const webhook = (urlSecret: unknown) => ({ ...base, execGateway: { authorizer: "webhook", webhook: { urlSecret } } });
  const database = (passwordSecret: unknown) => ({
    ...base,
    ansibleForms: { externalDatabase: { host: "db", user: "forms", passwordSecret } },
  });

  it("takes a Secret's name and a key, in the exec gateway and in AnsibleForms", () => {
    expect(() => parseStackConfig(webhook({ name: "hook", key: "url" }))).not.toThrow();
    expect(() => parseStackConfig(database({ name: "db-password", key: "password" }))).not.toThrow();
  });

  it("refuses an empty name or key, and a missing key, in both", () => {
    for (const config of [webhook, database]) {
      expect(() => parseStackConfig(config({ name: "", key: "k" }))).toThrow(/name must match pattern/);
      expect(() => parseStackConfig(config({ name: "s", key: "" }))).toThrow(
        /key must NOT have fewer than 1 characters/,
      );
      expect(() => parseStackConfig(config({ name: "s" }))).toThrow(/must have required property 'key'/);
    }
  });
});
