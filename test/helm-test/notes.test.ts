/**
 * The chart's install NOTES end with the next command to run, with the release's own values: the
 * `entryway enter` of the exec gateway and the `entryway ssh-config` of the SSH workspaces. The
 * printed ssh-config commands are run with the CLI, and the blocks they write must reach the
 * workspace Services the chart renders through the address the ConnectGateway component uses.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ExitCode } from "../../gateway/src/cli/enter-options";
import { helmBinaries, helmNotes, helmTemplate, repoRoot } from "../../testkit/harness/helm";

const chart = path.join(repoRoot, "charts/entryway");
const scenario = (name: string) => path.join(chart, "ci", name);

/** The `entryway` CLI from the gateway's sources, as a user runs it; the arguments as a shell would split them. */
function entryway(commandLine: string) {
  const args = commandLine.replace(/ >> ~\/\.ssh\/config$/, "").split(" ");
  expect(args[0]).toBe("entryway");
  return spawnSync(
    path.join(repoRoot, "node_modules/.bin/tsx"),
    [path.join(repoRoot, "gateway/src/cli/main.ts"), ...args.slice(1)],
    { encoding: "utf8" },
  );
}

const nextLines = (notes: string) => notes.slice(notes.indexOf("  Next, ")).split("\n");

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("install NOTES (%s)", (_, helm) => {
  it("exec gateway exposed with TLS: a token for the kubernetes authorizer, then entryway enter at the gateway's URL into a target namespace", () => {
    const notes = helmNotes(helm, chart, scenario("exec-gateway-kubernetes.yaml"));
    const next = nextLines(notes);
    expect(next).toEqual([
      "  Next, open a shell in a pod:",
      "    export ENTRYWAY_TOKEN=$(kubectl create token <service-account> --audience entryway)",
      "    entryway enter --gateway wss://exec.example.com/v1/enter team-a/<pod>",
    ]);
    // The command as printed, with a pod named: the CLI takes it (it fails only on reaching the gateway).
    const entered = entryway(next[2].trim().replace("<pod>", "web-0") + " --connect-timeout 1");
    expect(entered.stderr).toMatch(/^entryway: /);
    expect(entered.status).not.toBe(ExitCode.usage);
  });

  it("exec gateway in-cluster only: a port-forward to its Service, then entryway enter on loopback", () => {
    expect(nextLines(helmNotes(helm, chart, scenario("exec-gateway-oidc.yaml")))).toEqual([
      "  Next, open a shell in a pod:",
      "    export ENTRYWAY_TOKEN=<a token the oidc authorizer accepts>",
      "    kubectl -n entryway port-forward service/entryway-exec-gateway 8080:80 &",
      "    entryway enter --gateway ws://127.0.0.1:8080/v1/enter <namespace>/<pod>",
    ]);
  });

  it("SSH workspaces: one entryway ssh-config command per login user, whose blocks reach the Services the chart renders", () => {
    for (const [file, address, tls] of [
      ["ssh-several-workspaces.yaml", "ssh.internal.example.com:8022", false],
      ["ssh-tls.yaml", "ssh.example.com:2222", true],
    ] as const) {
      const next = nextLines(helmNotes(helm, chart, scenario(file)));
      const commands = next.filter((line) => line.startsWith("    entryway ssh-config "));
      expect(commands.length, next.join("\n")).toBeGreaterThan(0);
      const services = helmTemplate(helm, chart, { valuesFiles: [scenario(file)] })
        .filter((o) => o.kind === "Service" && o.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace")
        .map((o) => `${o.metadata!.name}.${o.metadata!.namespace}.svc.cluster.local`);
      const hosts: string[] = [];
      for (const command of commands) {
        const result = entryway(command.trim());
        expect(result.stderr).toBe("");
        expect(result.status).toBe(0);
        for (const block of result.stdout.split(/\n(?=Host )/)) {
          hosts.push(/^ {2}HostName (\S+)$/m.exec(block)![1]);
          expect(block).toContain(`  ProxyCommand entryway connect-proxy ${tls ? "--tls " : ""}${address} %h %p`);
        }
      }
      expect(hosts.sort()).toEqual(services.sort());
      expect(next[0]).toMatch(/^ {2}Next, add the workspaces to your ~\/\.ssh\/config, then ssh \S/);
      for (const alias of services.map((s) => s.split(".")[0])) expect(next[0]).toContain(alias);
    }
    // bob logs in as bob: his own command.
    expect(nextLines(helmNotes(helm, chart, scenario("ssh-several-workspaces.yaml")))).toContain(
      "    entryway ssh-config --gateway ssh.internal.example.com:8022 --user bob entryway-ws-bob.team-b.svc.cluster.local >> ~/.ssh/config",
    );
  });

  it("with nothing enabled, no next step", () => {
    expect(helmNotes(helm, chart, scenario("default.yaml"))).not.toContain("Next,");
  });
});
