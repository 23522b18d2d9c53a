/**
 * RunnerSeed: AnsibleForms' seed file (CONFIG_SEED_PATH) declaring its runners, rendered with
 * `yaml` into a ConfigMap. AnsibleForms stops at start on a bad seed (an unknown field, an
 * unresolved ${VAR}, bad YAML); this component applies the same rules at build time, so the
 * mistake fails `pulumi preview` instead.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { stringify } from "yaml";
import { SEED_FILE, SEED_PATH } from "./common";
import { COMPONENT_APP_ENV, SEED_TOKEN_ENV } from "./contract";
import type { ValueOf } from "../shared/enum";

/**
 * A runner's kind. The kinds' string unions are `as const` objects with a type of the same name:
 * TypeScript takes the plain strings, Pulumi's component analyzer reads them as enums (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, extractEnumMembers).
 */
export const RunnerType = {
  /** A runtime environment (an RTE). */
  Rte: "rte",
  /** An AWX or AAP instance. */
  Awx: "awx",
} as const;
export type RunnerType = ValueOf<typeof RunnerType>;

/** Who opens an RTE runner's socket. */
export const RteRunnerMode = {
  /** The app dials the RTE at `uri`. */
  Inbound: "inbound",
  /** The RTE dials the app. */
  Outbound: "outbound",
} as const;
export type RteRunnerMode = ValueOf<typeof RteRunnerMode>;

/**
 * One runner of the seed, as AnsibleForms' seed file writes it: `type` says which fields apply
 * (rte: mode, uri, token; awx: uri, token, username, password, ignore_certs), and a field of the
 * other kind is refused at preview (seedProblems). One interface with a `type` field rather than
 * a union of the kinds: Pulumi's component analyzer supports no discriminated unions (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, analyzeType), and the stack config and the chart's
 * values keep AnsibleForms' own layout. TypeScript callers get each kind's required fields from
 * RteRunner and AwxRunner (the union Runner), which fit here.
 */
export interface SeedRunner {
  /**
   * The runner's name; forms select it with `runner: <name>`.
   * @minLength 1
   */
  name: string;
  /** The kind: rte or awx. */
  type: RunnerType;
  /** Shown on the runner page. */
  description?: string;
  /** rte: "inbound" (the app dials uri) or "outbound" (the RTE dials the app); none for the deprecated database mode. */
  mode?: RteRunnerMode;
  /** rte: where the app reaches the RTE (inbound and database mode); awx: the AWX URL. */
  uri?: string;
  /** The token, as a "${VAR}" reference to a token variable ("${RTE_TOKEN}" or a secretEnv name). Never a literal. */
  token?: string;
  /** awx: the AWX user, with a password. */
  username?: string;
  /** awx: a password, as "${VAR}" naming a secretEnv variable. */
  password?: string;
  /** awx: skip verifying the AWX certificate (avoid). */
  ignore_certs?: boolean;
  /** The default runner for forms that name none. */
  is_default?: boolean;
}

/** A runtime environment runner (type rte). */
export interface RteRunner {
  /** The runner's name; forms select it with `runner: <name>`. */
  name: string;
  /** A runtime environment. */
  type: typeof RunnerType.Rte;
  /** Shown on the runner page. */
  description?: string;
  /** Who opens the socket: "inbound" (the app dials uri) or "outbound" (the RTE dials the app); none for the deprecated database mode. */
  mode?: RteRunnerMode;
  /** Where the app reaches the RTE (inbound and database mode). */
  uri?: string;
  /** The token, as a reference to a token variable: "${RTE_TOKEN}" or a secretEnv name. Never a literal. */
  token: string;
  /** The default runner for forms that name none. */
  is_default?: boolean;
}

/** An AWX / AAP runner (type awx). */
export interface AwxRunner {
  /** The runner's name; forms select it with `runner: <name>`. */
  name: string;
  /** An AWX or AAP instance. */
  type: typeof RunnerType.Awx;
  /** Shown on the runner page. */
  description?: string;
  /** The AWX URL. */
  uri: string;
  /** An AWX token, as "${VAR}" naming a secretEnv variable. */
  token?: string;
  /** The AWX user, with a password. */
  username?: string;
  /** A password, as "${VAR}" naming a secretEnv variable. */
  password?: string;
  /** Skip verifying the AWX certificate (avoid). */
  ignore_certs?: boolean;
  /** The default runner for forms that name none. */
  is_default?: boolean;
}

/** A runner with each kind's required fields, for TypeScript callers; every Runner is a SeedRunner. */
export type Runner = RteRunner | AwxRunner;

/** The seed's content: its runners and whether rows no longer declared are deleted. */
export interface SeedSpec {
  /** Delete seeded runner rows that the seed no longer declares (default false). */
  prune?: boolean;
  /** The runners, rte and awx. */
  runners: SeedRunner[];
}

const COMMON_FIELDS = ["name", "type", "description", "is_default"];
const FIELDS: Record<string, string[]> = {
  rte: [...COMMON_FIELDS, "mode", "uri", "token"],
  awx: [...COMMON_FIELDS, "uri", "token", "username", "password", "ignore_certs"],
};
/** Fields that carry credentials: they must be ${VAR} references, never literals. */
const CREDENTIAL_FIELDS = ["token", "password"];
const VAR_REF = /\$\{([^}]*)\}/g;
const WHOLE_VAR_REF = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;
/** What a credential may not reference: the app's own variables, RTE_TOKEN excepted. */
const NOT_A_TOKEN = new Set<string>(COMPONENT_APP_ENV.filter((name) => name !== SEED_TOKEN_ENV));

/** Every problem with a seed, as AnsibleForms would find them at start; empty when it is good. @internal */
export function seedProblems(spec: SeedSpec, appEnv: readonly string[]): string[] {
  const problems: string[] = [];
  const raw = spec as unknown as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key !== "prune" && key !== "runners") problems.push(`unknown field "${key}" in the seed`);
  }
  if (raw.prune !== undefined && typeof raw.prune !== "boolean") problems.push(`prune must be true or false`);
  if (!Array.isArray(raw.runners)) {
    return [...problems, "runners must be a list"];
  }
  const names = new Set<string>();
  const defaults: string[] = [];
  const env = new Set(appEnv);
  for (const [index, runner] of (raw.runners as Record<string, unknown>[]).entries()) {
    const label = typeof runner?.name === "string" && runner.name ? `runner "${runner.name}"` : `runner #${index + 1}`;
    if (typeof runner !== "object" || runner === null) {
      problems.push(`${label} is not an object`);
      continue;
    }
    if (typeof runner.name !== "string" || runner.name.length === 0) problems.push(`${label} has no name`);
    else if (names.has(runner.name)) problems.push(`${label} is declared twice (duplicate name)`);
    else names.add(runner.name);
    const fields = FIELDS[runner.type as string];
    if (!fields) {
      problems.push(`${label} has unknown type ${JSON.stringify(runner.type)} (rte or awx)`);
      continue;
    }
    for (const key of Object.keys(runner)) {
      if (!fields.includes(key)) problems.push(`${label} has unknown field "${key}"`);
    }
    if (runner.is_default !== undefined && typeof runner.is_default !== "boolean")
      problems.push(`${label}: is_default must be true or false`);
    if (runner.is_default === true) defaults.push(String(runner.name));
    if (runner.type === "rte") {
      if (typeof runner.token !== "string" || runner.token.length === 0)
        problems.push(`${label} is an rte runner without a token`);
      if (runner.mode !== undefined && runner.mode !== "inbound" && runner.mode !== "outbound") {
        problems.push(`${label} has unknown mode ${JSON.stringify(runner.mode)} (inbound or outbound)`);
      }
      if (runner.mode !== "outbound" && (typeof runner.uri !== "string" || runner.uri.length === 0)) {
        problems.push(`${label} needs a uri: the app dials an ${runner.mode ?? "database-mode"} RTE`);
      }
    } else if (typeof runner.uri !== "string" || runner.uri.length === 0) {
      problems.push(`${label} is an awx runner without a uri`);
    }
    for (const field of CREDENTIAL_FIELDS) {
      const value = runner[field];
      if (value !== undefined && (typeof value !== "string" || !WHOLE_VAR_REF.test(value))) {
        problems.push(`${label}: ${field} must be a \${VAR} reference to the app's environment, never a literal`);
      } else if (typeof value === "string" && NOT_A_TOKEN.has(value.slice(2, -1))) {
        problems.push(
          `${label}: ${field} may reference only a token variable (\${${SEED_TOKEN_ENV}} or one of secretEnv), not ${value}`,
        );
      }
    }
    for (const [key, value] of Object.entries(runner)) {
      if (typeof value !== "string") continue;
      for (const match of value.matchAll(VAR_REF)) {
        if (!env.has(match[1])) {
          problems.push(
            `${label}: ${key} uses \${${match[1]}}, which the app container does not have (it has: ${[...env].sort().join(", ")})`,
          );
        }
      }
    }
  }
  if (defaults.length > 1) problems.push(`more than one default runner: ${defaults.join(", ")}`);
  return problems;
}

/** The seed's problems, one line each, naming `where` (the component that reports them). @internal */
export function seedProblemLines(spec: SeedSpec, appEnv: readonly string[], where: string): string[] {
  return seedProblems(spec, appEnv).map((problem) => `${where}: the runner seed is invalid: ${problem}`);
}

/** The seed file's text, for a seed already checked. */
function seedText(spec: SeedSpec): string {
  const runners = spec.runners.map((runner) =>
    Object.fromEntries(Object.entries(runner).filter(([, v]) => v !== undefined)),
  );
  return stringify(
    { version: 1, runners: { ...(spec.prune !== undefined ? { prune: spec.prune } : {}), items: runners } },
    // The chart renders the same seed with Helm's toYaml: sorted keys, lists not indented.
    { sortMapEntries: true, indentSeq: false, lineWidth: 0 },
  );
}

/** The seed file's text; throws with every problem (one a line) when the seed breaks AnsibleForms' rules. @internal */
export function renderSeed(spec: SeedSpec, appEnv: readonly string[], where = "RunnerSeed"): string {
  const problems = seedProblemLines(spec, appEnv, where);
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return seedText(spec);
}

export interface RunnerSeedArgs {
  /** The namespace of the ConfigMap (the app's). */
  namespace: pulumi.Input<string>;
  /** The ConfigMap's name. */
  configMapName: string;
  /** The runners and prune. */
  seed: SeedSpec;
  /** The names of the app container's environment variables: every ${VAR} must be one of them. */
  appEnv: string[];
  /** Labels of the ConfigMap. */
  labels?: Record<string, string>;
}

/**
 * AnsibleForms' runner seed: the seed file (CONFIG_SEED_PATH) declaring its runners, in a
 * ConfigMap for the app to mount, checked by the rules AnsibleForms applies at start (no unknown
 * field, every ${VAR} one of the app's environment variables) so that a bad seed fails the
 * preview instead of the app.
 */
export class RunnerSeed extends pulumi.ComponentResource {
  /** The ConfigMap holding the seed file. */
  public readonly configMapName: pulumi.Output<string>;
  /** The seed file's text, as AnsibleForms reads it. */
  public readonly content: string;
  /** Where the app finds it (CONFIG_SEED_PATH) when the ConfigMap is mounted at its directory. */
  public readonly path: string = SEED_PATH;
  /** The key in the ConfigMap. */
  public readonly key: string = SEED_FILE;

  constructor(name: string, args: RunnerSeedArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:RunnerSeed", name, {}, opts);
    const problems = seedProblemLines(args.seed, args.appEnv, `RunnerSeed ${name}`);
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    this.content = seedText(args.seed);
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-configmap`,
      {
        metadata: { name: args.configMapName, namespace: args.namespace, labels: args.labels },
        data: { [SEED_FILE]: this.content },
      },
      { parent: this },
    );
    this.configMapName = configMap.metadata.name;
    this.registerOutputs({ configMapName: this.configMapName, content: this.content });
  }
}
