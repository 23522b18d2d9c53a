// `entryway config <verb>`: the contexts of the client's config file (contexts.ts), with kubectl
// config's verbs: get-contexts, current-context, use-context, set-context, delete-context.
import { parseCommand } from "./args.js";
import { table } from "./table.js";
import {
  authKind,
  checkContextName,
  configPath,
  readClientConfig,
  writeClientConfig,
  type ClientConfig,
  type Context,
  type ContextAuth,
} from "./contexts.js";
import { CliError, ExitCode } from "./exit-codes.js";
import { reportFailure } from "./enter-options.js";

const USAGE = `usage: entryway config <verb> [options]

The contexts of the client's config file (--config, else ENTRYWAY_CLIENT_CONFIG, else
$XDG_CONFIG_HOME/entryway/client.json): each names a gateway, how to sign in to it, and the default
namespace and container. Every command takes --context <name> for one run; ENTRYWAY_CONTEXT too.

verbs:
  get-contexts [-o name]       list the contexts (* marks the current one); -o name: names only
  current-context              print the current context's name
  use-context <name>           make <name> the current context
  set-context [<name>|--current] [options]
                               create <name>, or change the fields given (an empty value removes one)
  delete-context <name>        remove a context

set-context options:
  -g, --gateway <url>          https://host, or wss://host/v1/enter
      --token-file <path>      auth: read the token from this file (e.g. kubectl create token's)
      --token-env <VAR>        auth: read the token from this environment variable
      --oidc-issuer <url>      auth: sign in with OIDC (entryway login), this issuer ...
      --oidc-client-id <id>    ... as this client
      --oidc-scope <scope>     ... asking for this scope besides openid (repeatable)
  -n, --namespace <ns>         the namespace of targets given without one
  -c, --container <name>       the container when a Kubernetes target names none
      --ca-file <path>         trust this CA (PEM) for the gateway
      --connect-timeout <s>    the whole connection's deadline
      --keepalive <s>          seconds between pings (0: off)
      --current                change the current context (no <name>), or make <name> current
      --config <path>          the config file
`;

export const verbs = ["get-contexts", "current-context", "use-context", "set-context", "delete-context"] as const;

export const options = {
  config: { type: "string" },
  output: { type: "string", short: "o" },
  gateway: { type: "string", short: "g" },
  "token-file": { type: "string" },
  "token-env": { type: "string" },
  "oidc-issuer": { type: "string" },
  "oidc-client-id": { type: "string" },
  "oidc-scope": { type: "string", multiple: true },
  namespace: { type: "string", short: "n" },
  container: { type: "string", short: "c" },
  "ca-file": { type: "string" },
  "connect-timeout": { type: "string" },
  keepalive: { type: "string" },
  current: { type: "boolean" },
} as const;

type Values = {
  [K in keyof typeof options]?: (typeof options)[K] extends { multiple: true } ? string[] : string | boolean;
};

function getContexts(config: ClientConfig, output: string | undefined): string {
  const names = Object.keys(config.contexts).sort();
  if (output === "name") return names.map((name) => `${name}\n`).join("");
  if (output !== undefined) throw new CliError(ExitCode.usage, `-o ${output}: only -o name is known`);
  const rows = names.map((name) => {
    const context = config.contexts[name]!;
    return [
      name === config.currentContext ? "*" : "",
      name,
      context.gateway ?? "",
      authKind(context.auth) ?? "",
      context.namespace ?? "",
      context.container ?? "",
    ];
  });
  return table([["CURRENT", "NAME", "GATEWAY", "AUTH", "NAMESPACE", "CONTAINER"], ...rows], { gap: 3, trimEnd: true });
}

function seconds(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new CliError(ExitCode.usage, `--${flag} must be a number of seconds, not ${JSON.stringify(text)}`);
  return value;
}

/** The auth the flags name, or undefined when they name none; more than one kind is an error. */
function authFromFlags(values: Values): ContextAuth | undefined {
  const given: ContextAuth[] = [];
  if (typeof values["token-file"] === "string") given.push({ tokenFile: values["token-file"] });
  if (typeof values["token-env"] === "string") given.push({ tokenEnv: values["token-env"] });
  if (values["oidc-issuer"] !== undefined || values["oidc-client-id"] !== undefined) {
    if (typeof values["oidc-issuer"] !== "string" || typeof values["oidc-client-id"] !== "string")
      throw new CliError(ExitCode.usage, "OIDC needs both --oidc-issuer and --oidc-client-id");
    const scopes = values["oidc-scope"] as string[] | undefined;
    given.push({
      oidc: { issuer: values["oidc-issuer"], clientId: values["oidc-client-id"], ...(scopes ? { scopes } : {}) },
    });
  }
  if (given.length > 1)
    throw new CliError(ExitCode.usage, "one auth per context: --token-file, --token-env or --oidc-issuer");
  return given[0];
}

/** kubectl config set-context: the fields given replace the context's; an empty value removes one. */
function setContext(existing: Context, values: Values): Context {
  const context: Context = { ...existing };
  const strings = { gateway: "gateway", namespace: "namespace", container: "container", "ca-file": "caFile" } as const;
  for (const [flag, key] of Object.entries(strings)) {
    const value = values[flag as keyof typeof strings];
    if (typeof value !== "string") continue;
    if (value === "") delete context[key];
    else context[key] = value;
  }
  for (const [flag, key] of [
    ["connect-timeout", "connectTimeout"],
    ["keepalive", "keepalive"],
  ] as const) {
    const value = values[flag];
    if (typeof value !== "string") continue;
    if (value === "") delete context[key];
    else context[key] = seconds(flag, value);
  }
  const auth = authFromFlags(values);
  if (auth && Object.values(auth)[0] === "") delete context.auth;
  else if (auth) context.auth = auth;
  return context;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("config", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const [verb, ...names] = positionals;
  try {
    const { path, explicit } = configPath(values.config, process.env);
    const { config, legacy } = readClientConfig(path, explicit);
    const one = () => {
      if (names.length !== 1) throw new CliError(ExitCode.usage, `entryway config ${verb} <name>: name one context`);
      return checkContextName(names[0]!);
    };
    const known = (name: string) => {
      if (!config.contexts[name])
        throw new CliError(
          ExitCode.usage,
          `no context ${JSON.stringify(name)} in ${path} (known: ${Object.keys(config.contexts).join(", ") || "none"})`,
        );
    };
    switch (verb) {
      case "get-contexts":
        process.stdout.write(getContexts(config, values.output));
        return ExitCode.ok;
      case "current-context":
        if (!config.currentContext)
          throw new CliError(ExitCode.notFound, `no current context in ${path}: entryway config use-context <name>`);
        process.stdout.write(`${config.currentContext}\n`);
        return ExitCode.ok;
      case "use-context": {
        const name = one();
        known(name);
        writeClientConfig(path, { ...config, currentContext: name }, legacy);
        process.stdout.write(`switched to context ${name}\n`);
        return ExitCode.ok;
      }
      case "set-context": {
        const name = names.length === 0 && values.current ? config.currentContext : one();
        if (!name) throw new CliError(ExitCode.notFound, `no current context in ${path} for --current`);
        const created = !config.contexts[name];
        const contexts = { ...config.contexts, [name]: setContext(config.contexts[name] ?? {}, values) };
        const current = values.current || !config.currentContext ? name : config.currentContext;
        writeClientConfig(path, { currentContext: current, contexts }, legacy);
        process.stdout.write(`context ${name} ${created ? "created" : "modified"}\n`);
        return ExitCode.ok;
      }
      case "delete-context": {
        const name = one();
        known(name);
        const { [name]: _removed, ...contexts } = config.contexts;
        const next: ClientConfig = { contexts };
        if (config.currentContext && config.currentContext !== name) next.currentContext = config.currentContext;
        writeClientConfig(path, next, legacy);
        process.stdout.write(`deleted context ${name}\n`);
        return ExitCode.ok;
      }
      default:
        throw new CliError(
          ExitCode.usage,
          verb ? `unknown verb ${verb} (${verbs.join(", ")})` : `name a verb: ${verbs.join(", ")}`,
        );
    }
  } catch (error) {
    return reportFailure(error, "config");
  }
}
