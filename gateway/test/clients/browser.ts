// Headless Chromium (Debian's, driven by playwright-core) for the web page tests, and what goes
// wrong in it: CSP violations, console errors, uncaught errors, failed requests and HTTP errors.
import type { Browser, BrowserContext, BrowserContextOptions } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** What went wrong in the browser, collected over the context's whole life (reloads included). */
export interface Observed {
  cspViolations: string[];
  consoleErrors: string[];
  failedRequests: string[];
}

interface CspReporter {
  reportCspViolation(text: string): void;
  document: { addEventListener(type: "securitypolicyviolation", listener: (event: { violatedDirective: string; blockedURI: string; sourceFile: string; lineNumber: number; sample: string }) => void): void };
}

/**
 * Launches Chromium and opens a context with `options` whose every page reports into the returned
 * `observed`, before its own scripts run, on every load and reload.
 */
export async function launchObservedBrowser(options: BrowserContextOptions): Promise<{ browser: Browser; context: BrowserContext; observed: Observed }> {
  const observed: Observed = { cspViolations: [], consoleErrors: [], failedRequests: [] };
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // A fresh temporary profile is playwright's default for launch(). WebGL2 from SwiftShader, asked
    // for by name: Chromium no longer falls back to it by itself on a machine without a GPU (Chromium's
    // SwiftShader deprecation, M139), and the page's WebGL renderer is what the web test must see.
    args: ["--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const context = await browser.newContext(options);
  await context.exposeBinding("reportCspViolation", (_source, text: string) => void observed.cspViolations.push(text));
  await context.addInitScript(() => {
    const page = globalThis as unknown as CspReporter;
    page.document.addEventListener("securitypolicyviolation", (event) => page.reportCspViolation(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber} ${event.sample}`));
  });
  context.on("console", (message) => {
    if (message.type() === "error") observed.consoleErrors.push(`${message.location().url}: ${message.text()}`);
  });
  context.on("weberror", (error) => void observed.consoleErrors.push(`uncaught: ${error.error().message}`));
  context.on("requestfailed", (request) => void observed.failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`));
  context.on("response", (response) => {
    if (response.status() >= 400) observed.failedRequests.push(`${response.url()}: HTTP ${response.status()}`);
  });
  return { browser, context, observed };
}
