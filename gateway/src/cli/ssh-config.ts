/**
 * `entryway ssh-config`: prints the ~/.ssh/config blocks that reach SSH workspaces through an
 * Entryway CONNECT gateway, written by the one block writer the SshWorkspace Pulumi component
 * uses too (packages/ssh-config, `@entryway/ssh-config`).
 */
import { sshConfigBlock, type SshConfigEntry } from "@entryway/ssh-config";
import { parseCommand } from "./args.js";
import { ExitCode } from "./exit-codes.js";

const USAGE = `usage: entryway ssh-config --gateway <host:port> [options] <workspace>...

Prints the ~/.ssh/config block of each workspace. A workspace is its Service's in-cluster name
(e.g. entryway-ws-alice.dev.svc.cluster.local), optionally prefixed with the alias to use:
alice=entryway-ws-alice.dev.svc.cluster.local (the default alias is the name's first label).

options:
  --gateway <host:port>     the CONNECT gateway as you reach it (required)
  --user <name>             login user in the workspaces (default: dev)
  --port <n>                workspace Service port (default: 22)
  --tls                     TLS to the gateway
  --ca-file <path>          CA that signs the gateway's certificate (with --tls)
  --identity-file <path>    the private key to offer
  --proxy <proxytunnel|entryway>
                            ProxyCommand: entryway connect-proxy (default; a refusal
                            is one line naming the status and target) or proxytunnel
  --server-alive-interval <s>  keep-alive seconds (default: 30)
`;

export const options = {
  gateway: { type: "string" },
  user: { type: "string", default: "dev" },
  port: { type: "string", default: "22" },
  tls: { type: "boolean", default: false },
  "ca-file": { type: "string" },
  "identity-file": { type: "string" },
  proxy: { type: "string", default: "entryway" },
  "server-alive-interval": { type: "string", default: "30" },
} as const;

/** `entryway ssh-config ...`: resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("ssh-config", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  if (!values.gateway || positionals.length === 0) {
    process.stderr.write(
      `entryway ssh-config: ${values.gateway ? "name at least one workspace" : "--gateway is required"}\n${USAGE}`,
    );
    return ExitCode.usage;
  }
  try {
    const blocks = positionals.map((spec) => {
      const [alias, hostName] = spec.includes("=") ? spec.split("=", 2) : [spec.split(".")[0], spec];
      return sshConfigBlock({
        alias,
        hostName,
        port: Number(values.port),
        user: values.user,
        gateway: values.gateway!,
        tls: values.tls,
        caFile: values["ca-file"],
        identityFile: values["identity-file"],
        proxy: values.proxy as SshConfigEntry["proxy"],
        serverAliveInterval: Number(values["server-alive-interval"]),
      });
    });
    process.stdout.write(blocks.join("\n"));
    return 0;
  } catch (error) {
    process.stderr.write(`entryway ssh-config: ${(error as Error).message}\n`);
    return ExitCode.usage;
  }
}
