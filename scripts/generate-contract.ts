/**
 * Generates charts/entryway/files/contract.json: the facts the chart shares with the components
 * (ports, paths, RBAC rules, the app's env names), emitted from the TypeScript constants so the
 * templates read them (`.Files.Get "files/contract.json" | fromJson`, entryway.contract) instead of
 * repeating them; and the same file as policies/contract.json for the policy pack, which is
 * published from its own folder and so cannot read the chart's. A test keeps both in step
 * (`npm run generate:contract`).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { COMPONENT_APP_ENV, LOCAL_FILES_FOLDERS, SEED_TOKEN_ENV } from "../components/ansibleforms/contract";
import {
  DEBUG_RULE,
  EXEC_GATEWAY_CA_DIR,
  EXEC_GATEWAY_CA_FILE,
  EXEC_GATEWAY_CONFIG_DIR,
  EXEC_GATEWAY_CONFIG_FILE,
  EXEC_GATEWAY_METRICS_PORT,
  EXEC_GATEWAY_PATH,
  EXEC_GATEWAY_PORT,
  EXEC_GATEWAY_RECORD_DIR,
  EXEC_RULES,
  EXPOSURE_PROXY_HOPS,
  REVIEW_RULES,
} from "../components/exec-gateway/contract";
import { defaultConfig } from "../gateway/src/config";

/** The gateway's defaults of the settings its cross-field rules compare, for a key the chart's values leave out. */
const CROSS_FIELD_SETTINGS = ["reapGraceSeconds", "reapTimeoutMs", "bufferLowBytes", "bufferHighBytes"] as const;

export const CONTRACT_FILE = path.resolve(__dirname, "../charts/entryway/files/contract.json");
export const POLICY_CONTRACT_FILE = path.resolve(__dirname, "../policies/contract.json");

export function generateContract(): string {
  const contract = {
    execGateway: {
      port: EXEC_GATEWAY_PORT,
      metricsPort: EXEC_GATEWAY_METRICS_PORT,
      path: EXEC_GATEWAY_PATH,
      configDir: EXEC_GATEWAY_CONFIG_DIR,
      configFile: EXEC_GATEWAY_CONFIG_FILE,
      recordDir: EXEC_GATEWAY_RECORD_DIR,
      caDir: EXEC_GATEWAY_CA_DIR,
      caFile: EXEC_GATEWAY_CA_FILE,
      exposureProxyHops: EXPOSURE_PROXY_HOPS,
      rules: { exec: EXEC_RULES, debug: [DEBUG_RULE], review: REVIEW_RULES },
      settingDefaults: Object.fromEntries(CROSS_FIELD_SETTINGS.map((key) => [key, defaultConfig[key]])),
    },
    ansibleForms: {
      componentAppEnv: COMPONENT_APP_ENV,
      seedTokenEnv: SEED_TOKEN_ENV,
      localFilesFolders: LOCAL_FILES_FOLDERS,
    },
  };
  return `${JSON.stringify(contract, null, 2)}\n`;
}

if (require.main === module) {
  for (const file of [CONTRACT_FILE, POLICY_CONTRACT_FILE]) {
    writeFileSync(file, generateContract());
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
