// The package's version, for `entryway version`, the gateway's GET /version and the header of its
// WebSocket upgrades. package.json is one folder up from both src/ (tsx) and dist/ (built).
import { readFileSync } from "node:fs";

export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/**
 * The upgrade response's header naming the gateway's version. A gateway that sends it also sends
 * an application PING as soon as the session is authorized and open, so a client's connect deadline
 * can cover the authorization too (cli/deadline.ts).
 */
export const VERSION_HEADER = "entryway-version";
