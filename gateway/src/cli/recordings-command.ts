// `entryway recordings ls`: the session recordings the caller may replay (GET /v1/recordings). The
// gateway answers the list to those who may download a recording (reviewerGroups) and refuses it
// to everyone else: one rule for listing and replaying, decided by the gateway.
import { parseCommand } from "./args.js";
import { EnterError, ExitCode, reportFailure } from "./enter-options.js";
import { gatewayGet, gatewayRequest, HTTP_OPTIONS, HTTP_OPTIONS_HELP } from "./gateway-http.js";
import { table } from "./table.js";

const HELP = `usage: entryway recordings ls [options]

Lists the session recordings you may replay, newest first: id (for entryway replay <id>), start,
user, target, duration ("incomplete" when the recording has no end), size. Recordings are for the
gateway's reviewers (reviewerGroups); anyone else is refused (exit ${ExitCode.denied}).

options:
${HTTP_OPTIONS_HELP}      --json             the gateway's answer as JSON
  -h, --help             this text
`;

/** The verbs it takes first (completion). */
export const verbs = ["ls"] as const;

export const options = { ...HTTP_OPTIONS, json: { type: "boolean", default: false } } as const;

interface Summary {
  id: string;
  start: string;
  user: string;
  target: string;
  duration: number;
  size: number;
  complete: boolean;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h") {
    process.stdout.write(HELP);
    return 0;
  }
  if (sub !== "ls") {
    process.stderr.write(`entryway recordings: ${sub ? `unknown command ${sub}` : "name a command"}\n${HELP}`);
    return ExitCode.usage;
  }
  const parsed = parseCommand("recordings ls", HELP, rest, options);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  try {
    if (positionals.length > 0) throw new EnterError(ExitCode.usage, "entryway recordings ls takes no arguments");
    const body = await gatewayGet(await gatewayRequest(values, "/v1/recordings"), {
      deniedHint: " (recordings are for reviewers only)",
    });
    if (values.json) {
      process.stdout.write(body.endsWith("\n") ? body : `${body}\n`);
      return 0;
    }
    const { recordings } = JSON.parse(body) as { recordings: Summary[] };
    if (recordings.length === 0) {
      process.stderr.write("No recordings.\n");
      return 0;
    }
    const rows = recordings.map((r) => [
      r.id,
      r.start,
      r.user,
      r.target,
      r.complete ? `${r.duration.toFixed(1)}s` : `${r.duration.toFixed(1)}s (incomplete)`,
      String(r.size),
    ]);
    process.stdout.write(table([["ID", "START", "USER", "TARGET", "DURATION", "SIZE"], ...rows]));
    return 0;
  } catch (error) {
    return reportFailure(error, "recordings ls");
  }
}
