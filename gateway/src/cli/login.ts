// `entryway login`: signs in with OpenID Connect and keeps the tokens (token-store.ts) for the
// commands that need one (credentials.ts). The browser flow by default, the device flow with
// --device. The issuer and client id come from the flags, else the environment, else the context's
// auth (oidc), else the gateway itself (its /web/config.json names what its web page signs in with).
import { spawn } from "node:child_process";
import { parseCommand } from "./args.js";
import { configPath, readClientConfig, selectContext, type OidcAuth } from "./contexts.js";
import { EnterError, ExitCode, reportFailure, resolveSettings } from "./enter-options.js";
import { gatewayHttpUrl } from "./gateway-http.js";
import { browserLogin, DEFAULT_SCOPES, deviceLogin, discover } from "./oidc-login.js";
import { TokenStore } from "./token-store.js";

const HELP = `usage: entryway login [options]

Signs in with OpenID Connect and keeps the tokens for entryway enter, cp, ls and replay, which use
them when given no token. By default a browser opens the provider's sign-in page and comes back to
this machine (http://127.0.0.1:<port>/callback; register that redirect URI for the client, any port);
with --device, sign in on any other device with the code shown.

options:
      --context <name>    the context to sign in for (default: the current one): its auth's
                          oidc issuer, clientId and scopes (entryway config set-context)
  -g, --gateway <url>     the gateway to sign in for when neither flags nor context name the
                          provider: its web page's OIDC settings are used
      --issuer <url>      the OpenID provider (default: ENTRYWAY_OIDC_ISSUER, the context's, else
                          the gateway's)
      --client-id <id>    the client (default: ENTRYWAY_OIDC_CLIENT_ID, the context's, else the
                          gateway's oidcAudience: the gateway accepts ID tokens made for it)
      --device            the device authorization grant (RFC 8628): for a machine without a browser
      --no-browser        print the address to open instead of opening a browser
      --scope <scopes>    the scopes to ask for (default "${DEFAULT_SCOPES}" and the context's)
      --timeout <s>       give up waiting for the browser after this many seconds (default 300)
      --config <path>     client config file (as for entryway enter), for the gateway
  -h, --help              this text

The tokens are kept in $XDG_CONFIG_HOME/entryway/credentials/tokens.json (~/.config/...), a file
only you can read, and refreshed before they expire. entryway logout removes them.
Without an OpenID provider: a Kubernetes token, kubectl create token <sa> --audience entryway,
given with --token-file or ENTRYWAY_TOKEN_FILE.

exit status: 0 signed in; ${ExitCode.usage} usage; ${ExitCode.network} provider or gateway unreachable;
  ${ExitCode.denied} refused (the user said no, a wrong state, a timeout)
`;

export const options = {
  gateway: { type: "string", short: "g" },
  issuer: { type: "string" },
  "client-id": { type: "string" },
  device: { type: "boolean", default: false },
  "no-browser": { type: "boolean", default: false },
  scope: { type: "string" },
  timeout: { type: "string" },
  config: { type: "string" },
  context: { type: "string" },
} as const;

/** The OIDC settings the gateway's web page signs in with. */
async function gatewayOidc(gateway: string): Promise<{ issuer: string; clientId: string }> {
  // https, or http on loopback only: whoever could change this answer on the way would send the
  // user's password to a sign-in page of their own.
  const url = gatewayHttpUrl(gateway, "/web/config.json");
  let body: { oidc?: { issuer?: unknown; clientId?: unknown } | null };
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: "error" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = (await response.json()) as typeof body;
  } catch (error) {
    throw new EnterError(
      ExitCode.network,
      `cannot read the gateway's sign-in settings at ${url.href}: ${(error as Error).message}; give --issuer and --client-id`,
    );
  }
  const { issuer, clientId } = body.oidc ?? {};
  if (typeof issuer !== "string" || typeof clientId !== "string")
    throw new EnterError(
      ExitCode.usage,
      `the gateway at ${url.origin} does not sign in with OpenID Connect: give --issuer and --client-id, or use a token (entryway login --help)`,
    );
  return { issuer, clientId };
}

/** The OIDC settings of the context (--context, else ENTRYWAY_CONTEXT, else the current one), if it has them. */
export function contextOidc(config: string | undefined, name: string | undefined): OidcAuth | undefined {
  const { path, explicit } = configPath(config, process.env);
  const auth = selectContext(readClientConfig(path, explicit).config, name, process.env, path)?.context.auth;
  return auth && "oidc" in auth ? auth.oidc : undefined;
}

/** Starts the desktop's browser on `url`, quietly; the address is printed anyway. */
function openBrowser(url: string): void {
  const [command, ...args] = process.env.BROWSER
    ? [process.env.BROWSER, url]
    : process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? ["rundll32", "url.dll,FileProtocolHandler", url] // no cmd.exe: it would read the URL's & as a separator
        : ["xdg-open", url];
  try {
    const child = spawn(command!, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // the printed address is enough
  }
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("login", HELP, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  try {
    const oidc = contextOidc(values.config, values.context);
    let issuer = values.issuer ?? process.env.ENTRYWAY_OIDC_ISSUER ?? oidc?.issuer;
    let clientId = values["client-id"] ?? process.env.ENTRYWAY_OIDC_CLIENT_ID ?? oidc?.clientId;
    if (!issuer || !clientId) {
      // The gateway as enter finds it (flags, environment, the context); no token is needed here.
      const { gateway } = await resolveSettings(
        { gateway: values.gateway, config: values.config, context: values.context },
        process.env,
        false,
      );
      const fromGateway = await gatewayOidc(gateway);
      issuer ??= fromGateway.issuer;
      clientId ??= fromGateway.clientId;
    }
    const timeout = Number(values.timeout ?? 300);
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new EnterError(ExitCode.usage, "--timeout must be a positive number of seconds");
    const scope = values.scope ?? [...new Set([...DEFAULT_SCOPES.split(" "), ...(oidc?.scopes ?? [])])].join(" ");
    const config = await discover(issuer, clientId);
    const login = values.device
      ? await deviceLogin(config, {
          scope,
          onCode: ({ verificationUri, verificationUriComplete, userCode }) =>
            process.stderr.write(
              `To sign in, open ${verificationUri} on any device and enter the code ${userCode}\n` +
                (verificationUriComplete ? `(or open ${verificationUriComplete})\n` : "") +
                "Waiting for the sign-in...\n",
            ),
        })
      : await browserLogin(config, {
          scope,
          timeoutMs: timeout * 1000,
          onUrl: (url) => {
            const open = !values["no-browser"];
            process.stderr.write(
              `${open ? "Opening the sign-in page in your browser. If it does not open, visit" : "To sign in, open"}:\n  ${url.href}\n`,
            );
            if (open) openBrowser(url.href);
          },
        });
    new TokenStore(process.env).put(login);
    const until = new Date(login.expiresAt).toISOString();
    process.stdout.write(
      `Signed in to ${login.issuer} (token valid until ${until}${login.refreshToken ? ", then refreshed" : ""}).\n`,
    );
    return 0;
  } catch (error) {
    return reportFailure(error, "login");
  }
}
