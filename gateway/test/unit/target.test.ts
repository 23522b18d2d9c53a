// gateway/src/target.ts: a session's target from the query string or Entry's headers.
import { describe, expect, it } from "vitest";
import { parseTarget, TargetError } from "../../src/target.js";

describe("targets", () => {
  const url = (q: string) => new URL(`http://g/v1/enter?${q}`);
  it("reads pods, workloads and Docker containers", () => {
    expect(parseTarget(url("namespace=a&pod=p&container=c"), {}, "kubernetes")).toEqual({
      kind: "pod",
      namespace: "a",
      pod: "p",
      container: "c",
    });
    expect(parseTarget(url("namespace=a&workload=statefulset/web&instance=2"), {}, "kubernetes")).toEqual({
      kind: "workload",
      namespace: "a",
      workload: "statefulset/web",
      instance: 2,
    });
    expect(parseTarget(url("container=my_box"), {}, "docker")).toEqual({ kind: "docker", container: "my_box" });
  });
  it("takes Entry's app-name/proc-name/instance-no headers", () => {
    expect(parseTarget(url(""), { "app-name": "hello", "proc-name": "web", "instance-no": "1" }, "kubernetes")).toEqual(
      { kind: "workload", namespace: "hello", workload: "web", instance: 1 },
    );
  });
  it.each([
    "namespace=A&pod=p",
    "namespace=a",
    "namespace=a&pod=../x",
    "namespace=a&workload=web&instance=x",
    "namespace=a&workload=daemonset/x&instance=0",
  ])("rejects %s", (q) => {
    expect(() => parseTarget(url(q), {}, "kubernetes")).toThrow(TargetError);
  });
});
