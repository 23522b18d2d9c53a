// `entryway logout`: revokes the sign-in's tokens where the provider offers revocation (RFC 7009)
// and removes them from the token file, also when the provider cannot be reached.
import { parseCommand } from "./args.js";
import { EnterError, ExitCode, reportFailure } from "./enter-options.js";
import { contextOidc } from "./login.js";
import { discover, revokeLogin } from "./oidc-login.js";
import { TokenStore } from "./token-store.js";

const HELP = `usage: entryway logout [options]

Signs out: revokes the refresh and access tokens at the provider when it offers revocation, and
removes them from this machine. Without options, the current sign-in (the last entryway login).

options:
      --context <name>    the sign-in of this context's oidc auth
      --config <path>     the client config file
      --issuer <url>      the sign-in of this provider...
      --client-id <id>    ...and this client
  -h, --help              this text
`;

export const options = {
  issuer: { type: "string" },
  "client-id": { type: "string" },
  context: { type: "string" },
  config: { type: "string" },
} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("logout", HELP, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  try {
    const store = new TokenStore(process.env);
    const oidc = values.context ? contextOidc(values.config, values.context) : undefined;
    if (values.context && !oidc)
      throw new EnterError(
        ExitCode.usage,
        `context ${values.context} does not sign in with OIDC: nothing to sign out of`,
      );
    const login = store.remove(values.issuer ?? oidc?.issuer, values["client-id"] ?? oidc?.clientId);
    if (!login) {
      process.stdout.write("Not signed in.\n");
      return 0;
    }
    let revoked: string;
    try {
      revoked = (await revokeLogin(await discover(login.issuer, login.clientId), login))
        ? "its tokens were revoked"
        : "the provider offers no revocation: the tokens were removed here only";
    } catch (error) {
      revoked = `the tokens were removed here, but not revoked (${(error as Error).message})`;
    }
    process.stdout.write(`Signed out of ${login.issuer}; ${revoked}.\n`);
    return 0;
  } catch (error) {
    return reportFailure(error, "logout");
  }
}
