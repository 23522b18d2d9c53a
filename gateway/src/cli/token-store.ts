// The tokens `entryway login` got, kept for the commands that need one: one JSON file only the user
// can read (0600) in a directory only the user can enter (0700),
// $XDG_CONFIG_HOME/entryway/credentials/tokens.json (else ~/.config/...). One sign-in per issuer
// and client id; `current` names the last one, which a command uses when it is given no token.
// Written whole to a new file and renamed over the old, so a reader never sees half a file. A file
// that others may read is refused, as ssh refuses an unprotected key. No token is ever logged.
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError as EnterError, ExitCode } from "./exit-codes.js";

export interface StoredLogin {
  issuer: string;
  clientId: string;
  /** The token sent to the gateway: the ID token (its audience is the client id, as for the web page). */
  idToken: string;
  accessToken?: string;
  refreshToken?: string;
  /** When idToken expires, ms since the epoch. */
  expiresAt: number;
  scope?: string;
}

interface StoreFile {
  current?: string;
  logins: Record<string, StoredLogin>;
}

export function loginKey(issuer: string, clientId: string): string {
  return `${issuer.replace(/\/$/, "")} ${clientId}`;
}

export function tokenStorePath(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "entryway", "credentials", "tokens.json");
}

function read(path: string): StoreFile {
  let text: string;
  try {
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077)
      throw new EnterError(
        ExitCode.denied,
        `the token file ${path} may be read by others (mode ${mode.toString(8)}): it is not used; remove it and run entryway login again`,
      );
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { logins: {} };
    if (error instanceof EnterError) throw error;
    throw new EnterError(ExitCode.usage, `cannot read the token file ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as StoreFile;
    if (parsed && typeof parsed.logins === "object" && parsed.logins) return parsed;
  } catch {
    // answered below
  }
  throw new EnterError(ExitCode.usage, `the token file ${path} is not one entryway wrote: remove it and sign in again`);
}

function write(path: string, store: StoreFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // also when it was there before, with a looser mode
  const temporary = join(dir, `.tokens.${randomBytes(6).toString("hex")}.tmp`);
  writeFileSync(temporary, JSON.stringify(store, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}

export class TokenStore {
  readonly path: string;
  constructor(env: NodeJS.ProcessEnv) {
    this.path = tokenStorePath(env);
  }

  /** The login for an issuer and client id, else the current one (the last signed in). */
  get(issuer?: string, clientId?: string): StoredLogin | undefined {
    const store = read(this.path);
    const key = issuer && clientId ? loginKey(issuer, clientId) : store.current;
    return key ? store.logins[key] : undefined;
  }

  /** Keeps a login and makes it the current one. */
  put(login: StoredLogin): void {
    const store = read(this.path);
    const key = loginKey(login.issuer, login.clientId);
    store.logins[key] = login;
    store.current = key;
    write(this.path, store);
  }

  /** Replaces the tokens of a login after a refresh, without making it current. */
  update(login: StoredLogin): void {
    const store = read(this.path);
    const key = loginKey(login.issuer, login.clientId);
    store.logins[key] = login;
    write(this.path, store);
  }

  /** Forgets a login (the current one without arguments); returns what was removed. */
  remove(issuer?: string, clientId?: string): StoredLogin | undefined {
    const store = read(this.path);
    const key = issuer && clientId ? loginKey(issuer, clientId) : store.current;
    const login = key ? store.logins[key] : undefined;
    if (!key || !login) return undefined;
    delete store.logins[key];
    if (store.current === key) delete store.current;
    if (Object.keys(store.logins).length === 0) unlinkSync(this.path);
    else write(this.path, store);
    return login;
  }
}
