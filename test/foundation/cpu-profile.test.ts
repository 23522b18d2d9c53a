import { describe, expect, it } from "vitest";
import { moduleOf, partOf, selfTimes } from "../../scripts/cpu-profile";

const ROOT = "/repo";

/** A V8 .cpuprofile in miniature: a call tree, and which node each sample hit with the microseconds before it. */
function profile() {
  const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
    id,
    callFrame: { functionName, url, lineNumber: 0 },
    children,
  });
  return {
    nodes: [
      frame(1, "(root)", "", [2, 5, 7]),
      frame(2, "Stack", "file:///repo/components/stack/index.ts", [3]),
      frame(3, "debuggablePromise", "file:///repo/node_modules/@pulumi/pulumi/runtime/debuggable.js", [4]),
      frame(4, "serializeJSStackFrame", "node:internal/source_map/prepare_stack_trace"),
      frame(5, "mb", "file:///repo/node_modules/google-protobuf/google-protobuf.js", [6]),
      frame(6, "pathToFileURL", ""),
      frame(7, "(garbage collector)", ""),
    ],
    samples: [2, 3, 4, 4, 5, 6, 7],
    timeDeltas: [1000, 2000, 3000, 3000, 4000, 5000, 6000],
  };
}

describe("the CPU profile summary of bench:scale --cpu-prof", () => {
  it("names a frame's module: ours by path, a package by name, the Pulumi runtime by file, Node's own", () => {
    expect(moduleOf("file:///repo/components/ssh/ssh-workspace.ts", "f", ROOT)).toBe(
      "ours: components/ssh/ssh-workspace.ts",
    );
    expect(moduleOf("file:///repo/node_modules/@grpc/grpc-js/build/src/call.js", "f", ROOT)).toBe("@grpc/grpc-js");
    expect(moduleOf("file:///repo/node_modules/@pulumi/pulumi/runtime/rpc.js", "f", ROOT)).toBe(
      "@pulumi/pulumi/runtime/rpc.js",
    );
    expect(moduleOf("node:internal/url", "f", ROOT)).toBe("node internals");
    expect(moduleOf("", "(idle)", ROOT)).toBe("(idle)");
    expect(moduleOf("", "pathToFileURL", ROOT)).toBe("(native)");
  });

  it("groups modules into parts: serialization, the runtime, the Automation API, ours", () => {
    expect(partOf("google-protobuf")).toBe("protobuf serialization");
    expect(partOf("@pulumi/pulumi/proto/resource_pb.js")).toBe("protobuf serialization");
    expect(partOf("@pulumi/pulumi/automation/stack.js")).toBe("@pulumi/pulumi Automation API");
    expect(partOf("@pulumi/pulumi/runtime/debuggable.js")).toBe("@pulumi/pulumi runtime");
    expect(partOf("ours: index.ts")).toBe("ours (program, components, engine runner)");
  });

  it("sums each sample's time as its frame's self time, and charges Node's code to the module that called it", () => {
    const { totalMs, byModule, internalsByCaller } = selfTimes(profile(), ROOT);
    expect(totalMs).toBe(24);
    expect(Object.fromEntries(byModule)).toEqual({
      "ours: components/stack/index.ts": 1,
      "@pulumi/pulumi/runtime/debuggable.js": 2,
      "node internals": 6,
      "google-protobuf": 4,
      "(native)": 5,
      "(garbage collector)": 6,
    });
    expect(Object.fromEntries(internalsByCaller)).toEqual({
      "@pulumi/pulumi/runtime/debuggable.js": 6,
      "google-protobuf": 5,
    });
  });
});
