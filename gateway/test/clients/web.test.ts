// The web terminal as a person uses it: headless Chromium (Debian's, driven by playwright-core)
// against a real gateway on the Docker backend (podman) serving the bundled page. Sign in with a
// pasted token, follow a deep link, type Chinese and emoji, read what xterm.js rendered, resize the
// window, copy and paste, exit and read the exit message, reconnect; a second tab must sign in
// again (the token is kept per tab) and can pick a target; a bad token is told why. The page must
// raise no CSP violation. A screenshot is kept in test-artifacts/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webAssets } from "../../src/web-assets.js";
import { buildWebAssets } from "../../web/build.js";
import { oidcAuthorizer } from "../../src/auth/oidc.js";
import { podmanAvailable, startBedGateway, startClientBed, type ClientBed } from "./bed.js";
import { startOidcProvider } from "./oidc-provider.js";
import { REPO } from "./cli-harness.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(REPO, "test-artifacts");

/** What the tests read in the page (typed here: the gateway's TypeScript has no DOM library). */
interface PageGlobals {
  entryway: {
    terminal?: {
      cols: number;
      rows: number;
      buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string; getCell(x: number): { getChars(): string; getWidth(): number } | undefined } | undefined } };
      selectAll(): void;
    };
    ended: { text: string; exitCode?: number; closeCode?: string } | null;
  };
  cspViolations: string[];
  navigator: { clipboard: { readText(): Promise<string>; writeText(text: string): Promise<void> } };
  document: { addEventListener(type: "securitypolicyviolation", listener: (event: { violatedDirective: string; blockedURI: string }) => void): void };
}

async function screenText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const term = (globalThis as unknown as PageGlobals).entryway?.terminal;
    if (!term) return "";
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n");
  });
}

async function waitForText(page: Page, pattern: RegExp, timeoutMs = 45_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await screenText(page);
    const match = text.match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; terminal:\n${text.trimEnd().split("\n").slice(-15).join("\n")}`);
    await page.waitForTimeout(100);
  }
}

async function typeLine(page: Page, text: string): Promise<void> {
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

async function terminalSize(page: Page): Promise<{ cols: number; rows: number }> {
  return page.evaluate(() => {
    const term = (globalThis as unknown as PageGlobals).entryway.terminal!;
    return { cols: term.cols, rows: term.rows };
  });
}

describe.skipIf(!podmanAvailable() || !existsSync(CHROMIUM))("web terminal in Chromium against a gateway on podman", () => {
  let bed: ClientBed;
  let assets: string;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    assets = mkdtempSync(join(tmpdir(), "entryway-web-"));
    await buildWebAssets(assets);
    bed = await startClientBed("web-box", { routes: (config) => [webAssets({ config, dir: assets })] });
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // A fresh temporary profile is playwright's default for launch().
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    context = await browser.newContext({ viewport: { width: 1000, height: 640 }, permissions: ["clipboard-read", "clipboard-write"] });
    await context.addInitScript(() => {
      const page = globalThis as unknown as PageGlobals;
      page.cspViolations = [];
      page.document.addEventListener("securitypolicyviolation", (event) => page.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
  });
  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
    if (assets) rmSync(assets, { recursive: true, force: true });
  });

  it("serves the page with a strict CSP and security headers", async () => {
    const response = await fetch(`${bed.base}/?container=web-box`);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'nonce-[A-Za-z0-9+/=]+'; connect-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$/);
    const html = await response.text();
    expect(html).toContain(`content="${/'nonce-([^']+)'/.exec(csp)![1]}"`); // the page's nonce is this response's
    expect(html).not.toMatch(/<script>|<style>|https?:\/\//); // no inline code, nothing from elsewhere
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const script = await fetch(`${bed.base}/web/app.js`);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await script.text()).length).toBeGreaterThan(100_000); // xterm.js is bundled in
    expect(await (await fetch(`${bed.base}/web/config.json`)).json()).toEqual({ path: "/v1/enter", backend: "docker", oidc: null });
  });

  it("signs in, opens a deep-linked target, renders CJK and emoji, follows the window size, copies, pastes, exits with its code, reconnects", async () => {
    const page = await context.newPage();
    await page.goto(`${bed.base}/?container=web-box`);
    await page.locator("#token").fill("user:alice");
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitForText(page, /^\/ # $/m);
    expect(await page.locator("#target-label").textContent()).toBe("web-box");

    await typeLine(page, "echo 你好世界; stty size");
    const first = await terminalSize(page);
    await waitForText(page, new RegExp(`^你好世界\\n${first.rows} ${first.cols}$`, "m"));
    await typeLine(page, "echo 'emoji: 😀 🚀 ok'");
    await waitForText(page, /^emoji: 😀 🚀 ok$/m);
    // Unicode 11 widths: CJK characters and emoji take two cells, as the container's terminal counts them.
    const widths = await page.evaluate(() => {
      const buffer = (globalThis as unknown as PageGlobals).entryway.terminal!.buffer.active;
      const found: Record<string, number> = {};
      for (let y = 0; y < buffer.length; y++) {
        const line = buffer.getLine(y);
        for (let x = 0; line && x < 80; x++) {
          const cell = line.getCell(x);
          if (cell && ["你", "😀", "e"].includes(cell.getChars())) found[cell.getChars()] = cell.getWidth();
        }
      }
      return found;
    });
    expect(widths).toEqual({ 你: 2, "😀": 2, e: 1 });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "web-terminal.png") });

    // The window shrinks: the fit addon gives fewer columns and rows, WINCH tells the shell.
    await page.setViewportSize({ width: 720, height: 420 });
    await expect.poll(() => terminalSize(page), { timeout: 30_000 }).not.toEqual(first);
    const second = await terminalSize(page);
    expect(second.cols).toBeLessThan(first.cols);
    expect(second.rows).toBeLessThan(first.rows);
    await typeLine(page, "clear; stty size");
    await waitForText(page, new RegExp(`^${second.rows} ${second.cols}$`, "m"));
    await page.screenshot({ path: join(ARTIFACTS, "web-terminal-resized.png") });

    // Copy (Ctrl+Shift+C copies the selection) and paste (Ctrl+Shift+V types the clipboard).
    await page.evaluate(() => (globalThis as unknown as PageGlobals).entryway.terminal!.selectAll());
    await page.keyboard.press("Control+Shift+C");
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText()), { timeout: 30_000 }).toContain(`${second.rows} ${second.cols}`);
    await page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.writeText("echo pasted-$((3*3))-粘贴\n"));
    await page.keyboard.press("Control+Shift+V");
    await waitForText(page, /^pasted-9-粘贴$/m);

    await typeLine(page, "exit 3");
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).entryway.ended), { timeout: 30_000 }).toMatchObject({ exitCode: 3, closeCode: "exit" });
    await expect.poll(() => page.locator("#ended").isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await page.locator("#ended-text").textContent()).toBe("Session ended: exit code 3.");
    await waitForText(page, /^\[entryway\] Session ended: exit code 3\.$/m);
    await page.screenshot({ path: join(ARTIFACTS, "web-terminal-ended.png") });

    await page.locator("#ended-reconnect").click();
    await waitForText(page, /^\/ # $/m);
    expect(await page.locator("#ended").isHidden()).toBe(true);
    await typeLine(page, "echo again-$((20+1))");
    await waitForText(page, /^again-21$/m);

    // A reload keeps the tab's token; the target comes from the URL.
    await page.reload();
    await waitForText(page, /^\/ # $/m);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).cspViolations)).toEqual([]);
    await page.close();
  });

  it("keeps the token per tab, picks a target, and tells a refused sign-in why", async () => {
    const page = await context.newPage();
    await page.goto(`${bed.base}/`);
    await page.locator("#sign-in").waitFor({ state: "visible" }); // a new tab knows no token
    await page.locator("#token").fill("stolen");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("#container").fill("web-box");
    await page.getByRole("button", { name: "Open" }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).entryway.ended), { timeout: 30_000 }).toMatchObject({ closeCode: "denied" });
    expect(await page.locator("#ended-text").textContent()).toBe("Session closed by the gateway: permission denied: unknown token (denied).");
    expect(new URL(page.url()).search).toBe("?container=web-box"); // the picked target is a deep link
    await page.locator("#ended-sign-in").click();
    await page.locator("#token").fill("user:bob");
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitForText(page, /^\/ # $/m);
    await typeLine(page, "echo bob-$((1+1))");
    await waitForText(page, /^bob-2$/m);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).cspViolations)).toEqual([]);
    await page.close();
  });
  it("signs in with OpenID Connect (authorization code + PKCE) when the gateway verifies OIDC tokens", async () => {
    const clientId = "entryway-web";
    const provider = await startOidcProvider({ clientId, subject: "alice@example.com", namespaces: ["docker"] });
    const oidc = await startBedGateway(bed.podman, {
      overrides: { authorizer: "oidc", oidcIssuer: provider.issuer, oidcAudience: clientId },
      authorizer: oidcAuthorizer({ issuer: provider.issuer, audience: clientId, jwksUri: "", usernameClaim: "sub", namespacesClaim: "namespaces" }),
      routes: (config) => [webAssets({ config, dir: assets })],
    });
    try {
      const csp = (await fetch(`${oidc.base}/`)).headers.get("content-security-policy") ?? "";
      expect(csp).toContain(`connect-src 'self' ${provider.issuer};`); // the token endpoint, and nothing else
      const page = await context.newPage();
      await page.goto(`${oidc.base}/?container=web-box`);
      await page.locator("#oidc").waitFor({ state: "visible" });
      expect(await page.locator("#oidc-issuer").textContent()).toBe(provider.issuer);
      await page.getByRole("button", { name: "Sign in with your identity provider" }).click();
      await waitForText(page, /^\/ # $/m);
      expect(new URL(page.url()).search).toBe("?container=web-box"); // back at the deep link, code and state gone
      expect(provider.authorizations).toEqual([expect.objectContaining({ client_id: clientId, code_challenge_method: "S256", redirect_uri: `${oidc.base}/`, scope: "openid profile email" })]);
      expect(provider.tokenRequests).toEqual([expect.objectContaining({ grant_type: "authorization_code", client_id: clientId })]);
      await typeLine(page, "echo oidc-$((2*2))");
      await waitForText(page, /^oidc-4$/m);
      expect(oidc.audit).toContainEqual(expect.objectContaining({ event: "session.start", user: "alice@example.com" }));
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).cspViolations)).toEqual([]);
      await page.close();
    } finally {
      await oidc.gateway.shutdown("test over");
      await provider.stop();
    }
  });
});
