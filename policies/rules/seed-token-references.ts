/**
 * `entryway-seed-token-references`, mandatory: in a ConfigMap carrying an AnsibleForms seed (a
 * `runners:` section), every credential (token, password) is a ${VAR} reference to a token variable
 * (${RTE_TOKEN} or a secretEnv), never one of the app's own variables (${ENCRYPTION_SECRET},
 * ${DB_PASSWORD}, ${METRICS_TOKEN}...) and never a literal.
 *
 * Upstream: ansibleforms.com, Config seed: the app reads the seed from CONFIG_SEED_PATH and resolves
 * each ${VAR} in it from its own environment, so a seed naming one of the app's variables hands that
 * secret to a runner row (docs/upstream-facts.md, "Seed").
 */
import contract from "../contract.json";
import { label, resourcePolicy, type K8sObject } from "./helpers";

/**
 * The variables the components set in the AnsibleForms app container, RTE_TOKEN aside: a seed
 * credential (token, password) naming one would hand the app's own secret to a runner row
 * (generated from components/ansibleforms/contract.ts COMPONENT_APP_ENV and SEED_TOKEN_ENV).
 */
const NOT_SEED_TOKENS: string[] = contract.ansibleForms.componentAppEnv.filter(
  (name) => name !== contract.ansibleForms.seedTokenEnv,
);

/** A ConfigMap carrying an AnsibleForms seed: every credential a ${VAR} of a token variable, never a literal. */
export function checkSeedCredentials(o: K8sObject): string[] {
  if (o.kind !== "ConfigMap") return [];
  const problems: string[] = [];
  for (const [key, text] of Object.entries((o.data as Record<string, string> | undefined) ?? {})) {
    if (typeof text !== "string" || !/^\s*runners\s*:/m.test(text)) continue;
    const where = `${label(o)} seed ${key}`;
    for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
      if (NOT_SEED_TOKENS.includes(match[1]))
        problems.push(
          `${where}: references \${${match[1]}}; seed credentials may reference only token variables (\${RTE_TOKEN} or a secretEnv)`,
        );
    }
    for (const match of text.matchAll(/^[\s-]*(token|password)\s*:\s*(.*?)\s*$/gm)) {
      if (!/^(["']?)\$\{[A-Za-z_][A-Za-z0-9_]*\}\1$/.test(match[2]))
        problems.push(`${where}: ${match[1]} is a literal; it must be a \${VAR} reference`);
    }
  }
  return problems;
}

export const seedCredentials = resourcePolicy(
  "entryway-seed-token-references",
  "AnsibleForms seed credentials are ${VAR} references to token variables (RTE_TOKEN or a secretEnv), never the app's own secrets or literals.",
  "mandatory",
  checkSeedCredentials,
);
