// `entryway version` (and `entryway --version`): this client's version, and the gateway's when one
// is configured (flags, environment or context) and answers GET /version in time. The gateway's
// version needs no token; an unreachable gateway is one line on stderr, and the exit is still 0.
import { VERSION } from "../version.js";
import { parseCommand } from "./args.js";
import { endpointUrl, EnterError, ExitCode, readCaFile, reportFailure, resolveSettings } from "./enter-options.js";
import { httpGet } from "./http-get.js";

const USAGE = `usage: entryway version [--client] [-g <url>] [--context <name>]

Prints this client's version and, when a gateway is configured and answers in time, the gateway's.
options:
      --client               only the client's version (no network)
  -g, --gateway <url>        the gateway (default: the context's, or ENTRYWAY_GATEWAY)
      --context <name>       the context to ask
      --config <path>        the client config file
      --ca-file <path>       trust this CA (PEM) besides the system's
      --connect-timeout <s>  the deadline for the whole request (default 10)
`;

export const options = {
  client: { type: "boolean" },
  gateway: { type: "string", short: "g" },
  context: { type: "string" },
  config: { type: "string" },
  "ca-file": { type: "string" },
  "connect-timeout": { type: "string" },
} as const;

/**
 * The gateway's endpoint (as entryway enter reaches it, the default path /v1/enter) in its
 * http(s) flavour: a GET without an upgrade answers the version there, on a path every exposure
 * (the chart's and the components' VirtualService or Ingress) already routes.
 */
export function versionUrl(gateway: string): URL {
  const url = endpointUrl(gateway, { kind: "docker", container: "-" }, [], true);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  url.search = "";
  return url;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("version", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  process.stdout.write(`client: ${VERSION}\n`);
  if (values.client) return ExitCode.ok;
  try {
    let settings;
    try {
      settings = await resolveSettings(
        {
          gateway: values.gateway,
          caFile: values["ca-file"],
          connectTimeout: values["connect-timeout"],
          config: values.config,
          context: values.context,
        },
        process.env,
        false,
      );
    } catch (error) {
      // No gateway anywhere: the client's version is the answer.
      if (error instanceof EnterError && /^no gateway URL/.test(error.message)) return ExitCode.ok;
      throw error;
    }
    const url = versionUrl(settings.gateway);
    const ca = readCaFile(settings);
    try {
      const { status, body } = await httpGet(url, {
        timeoutMs: settings.connectTimeoutSeconds * 1000,
        ...(ca ? { ca } : {}),
      });
      const version = status === 200 ? (JSON.parse(body) as { version?: unknown }).version : undefined;
      if (typeof version !== "string")
        throw new EnterError(ExitCode.network, `${url.href} answered HTTP ${status} without a version`);
      process.stdout.write(`gateway: ${version} (${url.protocol}//${url.host})\n`);
    } catch (error) {
      if (!(error instanceof EnterError || error instanceof SyntaxError)) throw error;
      process.stderr.write(`entryway: the gateway's version is unknown: ${error.message}\n`);
    }
    return ExitCode.ok;
  } catch (error) {
    return reportFailure(error, "version");
  }
}
