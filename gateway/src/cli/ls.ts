// `entryway ls [namespace]`: the targets the caller may enter (GET /v1/targets): the gateway asks its
// authorizer about every running pod (or container) with the question an exec asks, and answers
// only those allowed. A namespace the caller may not enter looks as empty as one with no pods.
import { parseCommand } from "./args.js";
import { EnterError, ExitCode, reportFailure } from "./enter-options.js";
import { gatewayGet, gatewayRequest, HTTP_OPTIONS, HTTP_OPTIONS_HELP } from "./gateway-http.js";
import { table } from "./table.js";

const HELP = `usage: entryway ls [options] [namespace]

Lists the targets you may enter: running pods (Kubernetes; in one namespace, or in all the
gateway may list) or running containers (Docker), as entryway enter takes them. The gateway asks
its authorizer about each one, as it does before a shell: nothing you may not enter is listed.
A namespace you may not enter lists as empty, as does one without pods.

options:
${HTTP_OPTIONS_HELP}      --json             the gateway's answer as JSON
  -h, --help             this text

exit status: 0; ${ExitCode.usage} usage; ${ExitCode.network} network; ${ExitCode.denied} no token, or a token the gateway refuses
`;

export const options = { ...HTTP_OPTIONS, json: { type: "boolean", default: false } } as const;

interface TargetEntry {
  target: string;
  containers?: string[];
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("ls", HELP, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  try {
    if (positionals.length > 1) throw new EnterError(ExitCode.usage, "name at most one namespace (entryway ls --help)");
    const query = positionals[0] ? `?namespace=${encodeURIComponent(positionals[0])}` : "";
    const body = await gatewayGet(await gatewayRequest(values, `/v1/targets${query}`));
    if (values.json) {
      process.stdout.write(body.endsWith("\n") ? body : `${body}\n`);
      return 0;
    }
    const { targets } = JSON.parse(body) as { targets: TargetEntry[] };
    if (targets.length === 0) {
      process.stderr.write(`No targets you may enter${positionals[0] ? ` in ${positionals[0]}` : ""}.\n`);
      return 0;
    }
    const kubernetes = targets.some((entry) => entry.containers !== undefined);
    const rows = targets.map((entry) =>
      kubernetes ? [entry.target, (entry.containers ?? []).join(",")] : [entry.target],
    );
    process.stdout.write(table([kubernetes ? ["TARGET", "CONTAINERS"] : ["TARGET"], ...rows]));
    return 0;
  } catch (error) {
    return reportFailure(error, "ls");
  }
}
