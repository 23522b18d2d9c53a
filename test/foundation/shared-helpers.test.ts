import { describe, expect, it } from "vitest";
import { objectName, serviceFqdn, statefulSetName } from "../../components/shared/names";
import { sanitiseLabelValue, selectorLabels, standardLabels } from "../../components/shared/labels";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../../components/shared/security";

describe("names", () => {
  it("joins parts into a DNS-1123 label", () => {
    expect(objectName("Entryway", "Exec_Gateway")).toBe("entryway-exec-gateway");
    expect(objectName("a", "", "b")).toBe("a-b");
  });
  it("keeps long names unique and within 63 characters", () => {
    const a = objectName("x".repeat(70), "one");
    const b = objectName("x".repeat(70), "two");
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
  it("caps StatefulSet names at 52 (their pods' revision label is the name plus 11), hashing only on overflow", () => {
    expect(statefulSetName("entryway", "ansibleforms-mysql")).toBe("entryway-ansibleforms-mysql");
    const long = statefulSetName("r".repeat(40), "ansibleforms-mysql");
    expect(long).toHaveLength(52);
    expect(long).not.toBe(statefulSetName("r".repeat(40), "ansibleforms-mysqm"));
    expect(objectName("r".repeat(40), "ansibleforms-mysql")).toHaveLength(59);
  });
  it("refuses a name with nothing usable in it", () => {
    expect(() => objectName("--", "")).toThrow(/cannot make a Kubernetes name/);
  });
  it("builds service FQDNs", () => {
    expect(serviceFqdn("ws", "dev")).toBe("ws.dev.svc.cluster.local");
  });
});

describe("labels", () => {
  it("selector labels are a stable subset of the standard labels", () => {
    const identity = { name: "exec-gateway", instance: "prod", component: "server" };
    const all = standardLabels({ ...identity, version: "1.2.3" }, { team: "a" });
    expect(all).toMatchObject(selectorLabels(identity));
    expect(selectorLabels(identity)).not.toHaveProperty("app.kubernetes.io/version");
    expect(all["app.kubernetes.io/part-of"]).toBe("entryway");
    expect(all.team).toBe("a");
  });
  it("extra labels cannot override the standard ones", () => {
    expect(
      standardLabels({ name: "n", instance: "i" }, { "app.kubernetes.io/name": "evil" })["app.kubernetes.io/name"],
    ).toBe("n");
  });
  it("sanitises label values", () => {
    expect(sanitiseLabelValue("ghcr.io/x:1.0+build")).toBe("ghcr.io-x-1.0-build");
  });
});

describe("security contexts", () => {
  it("are Pod Security restricted", () => {
    expect(restrictedPodSecurityContext({ user: 1000 })).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const container = restrictedContainerSecurityContext();
    expect(container).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container.capabilities).not.toHaveProperty("add");
  });
  it("allow a writable root filesystem and added capabilities only when asked", () => {
    const sshd = restrictedContainerSecurityContext({
      readOnlyRootFilesystem: false,
      addCapabilities: ["NET_BIND_SERVICE"],
    });
    expect(sshd).toMatchObject({
      readOnlyRootFilesystem: false,
      capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] },
    });
  });
});
