/**
 * What a real node (testkit/harness/node.ts) needs from this machine and leaves on it: the tools it
 * runs, a node number no other node here uses, the cgroup root of its own in every cgroup v1
 * hierarchy, the mounts under its folder, its processes; and the check that none is left after
 * its stop().
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

/** What the node needs from this machine, by the Debian package each comes from. */
const NODE_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  containerd: ["/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2", "/usr/bin/ctr"],
  runc: ["/usr/sbin/runc"],
  "containernetworking-plugins": ["/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"],
  "util-linux": ["/usr/bin/nsenter"],
  iproute2: ["/usr/sbin/ip"],
  iptables: ["/usr/sbin/iptables"],
  gcc: ["/usr/bin/gcc"],
  "busybox-static": ["/bin/busybox"],
};

/** What the node needs from this machine, and the Debian package each comes from. */
export const NODE_TOOLS: readonly { path: string; pkg: string }[] = Object.entries(NODE_PACKAGES).flatMap(
  ([pkg, files]) => files.map((file) => ({ path: file, pkg })),
);

/** The missing tools, as "<path> (Debian package <pkg>)"; empty when the node can be tried. */
export function missingNodeTools(): string[] {
  const missing = NODE_TOOLS.filter(({ path: file }) => !existsSync(file)).map(
    ({ path: file, pkg }) => `${file} (Debian package ${pkg})`,
  );
  if (process.getuid?.() !== 0) missing.push("root (the node makes network namespaces, mounts and cgroups)");
  return missing;
}

/** A node number not used by another node on this machine (its netns and veth names, its subnets). */
export function pickNumber(): number {
  const namespaces = existsSync("/run/netns") ? readdirSync("/run/netns") : [];
  const links = readdirSync("/sys/class/net");
  for (let attempt = 0; attempt < 250; attempt++) {
    const n = ((process.pid + attempt) % 250) + 1;
    if (!namespaces.includes(`ewnode-${n}`) && !links.includes(`ewnode${n}`)) return n;
  }
  throw new Error("no free node number (250 entryway nodes on this machine?)");
}

const CGROUP_HIERARCHIES = ["cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "systemd"];

/**
 * A cgroup root of the node's own (`/entryway-node-<n>`) in every cgroup v1 hierarchy (the
 * kubelet checks that its cgroupRoot exists in each, pkg/kubelet/cm/container_manager_linux.go),
 * so its kubepods tree never meets another node's on this machine.
 */
export function makeCgroupRoot(cgroupRoot: string): void {
  for (const hierarchy of CGROUP_HIERARCHIES) {
    const base = `/sys/fs/cgroup/${hierarchy}`;
    if (!existsSync(base)) continue;
    const mine = path.join(base, cgroupRoot);
    mkdirSync(mine, { recursive: true });
    if (hierarchy === "cpuset") {
      // A new cpuset is empty; a task can only join one with CPUs and memory nodes.
      for (const file of ["cpuset.cpus", "cpuset.mems"])
        writeFileSync(path.join(mine, file), readFileSync(path.join(base, file)));
    }
  }
}

/** Removes the node's cgroup root from every hierarchy, retried while its last tasks leave. */
export async function removeCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const hierarchy of CGROUP_HIERARCHIES) {
    const mine = `/sys/fs/cgroup/${hierarchy}${cgroupRoot}`;
    for (let attempt = 0; ; attempt++) {
      try {
        removeCgroup(mine);
        break;
      } catch (error) {
        if (attempt > 40)
          throw new Error(`cgroup ${mine} could not be removed: ${(error as Error).message}`, { cause: error });
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}

/** Mount points at or under `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => !!point && (point === dir || point.startsWith(`${dir}/`)))
    .map((point) => point.replace(/\\040/g, " "))
    .sort((a, b) => b.length - a.length);
}

/** Removes a cgroup folder and the ones below it, deepest first (cgroup folders hold only control files). */
function removeCgroup(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const sub = path.join(dir, entry);
    if (statSync(sub).isDirectory()) removeCgroup(sub);
  }
  rmdirSync(dir);
}

/** The PIDs of this machine's processes whose command line (its arguments NUL-separated) passes `test`. */
export function processesWhere(test: (cmdline: string) => boolean): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** What a stopped node left on this machine (nothing, when its stop() did its work). */
export function nodeLeftovers(node: { readonly name: string; readonly netns: string; readonly dir: string }): string[] {
  const n = node.name.replace("entryway-node-", "");
  return [
    ...(existsSync(`/run/netns/${node.netns}`) ? ["the node's network namespace"] : []),
    ...(existsSync(`/sys/fs/cgroup/pids/entryway-node-${n}`) ? ["the node's cgroup root"] : []),
    ...(readFileSync("/proc/self/mountinfo", "utf8").includes(node.dir) ? ["mounts under the node's folder"] : []),
    ...(existsSync(node.dir) ? ["the node's folder"] : []),
    ...processesWhere((cmdline) => cmdline.includes(node.dir)).map((pid) => `process ${pid} of the node`),
  ];
}
