// The browser the web-terminal tests drive: Debian's headless Chromium through playwright-core, and
// reading what the page's terminal (xterm.js, exposed as window.entryway.terminal) holds.
import type { Browser, BrowserContext, Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** What these helpers read in the page (typed here: the gateway's TypeScript has no DOM library). */
interface TerminalGlobals {
  entryway?: {
    terminal?: {
      buffer: {
        active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined };
      };
    };
  };
}

/** What went wrong in the browser, collected over a context's whole life (reloads included). */
export interface Observed {
  cspViolations: string[];
  consoleErrors: string[];
  failedRequests: string[];
}

interface CspReporter {
  reportCspViolation(text: string): void;
  document: {
    addEventListener(
      type: "securitypolicyviolation",
      listener: (event: {
        violatedDirective: string;
        blockedURI: string;
        sourceFile: string;
        lineNumber: number;
        sample: string;
      }) => void,
    ): void;
  };
}

/**
 * Every page of `context` reports into the returned record, before its own scripts run, on every
 * load and reload: CSP violations, console errors, uncaught errors, failed requests, HTTP errors.
 */
export async function observePages(context: BrowserContext): Promise<Observed> {
  const observed: Observed = { cspViolations: [], consoleErrors: [], failedRequests: [] };
  await context.exposeBinding("reportCspViolation", (_source, text: string) => void observed.cspViolations.push(text));
  await context.addInitScript(() => {
    const page = globalThis as unknown as CspReporter;
    page.document.addEventListener("securitypolicyviolation", (event) =>
      page.reportCspViolation(
        `${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber} ${event.sample}`,
      ),
    );
  });
  context.on("console", (message) => {
    if (message.type() === "error") observed.consoleErrors.push(`${message.location().url}: ${message.text()}`);
  });
  context.on("weberror", (error) => void observed.consoleErrors.push(`uncaught: ${error.error().message}`));
  context.on(
    "requestfailed",
    (request) => void observed.failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`),
  );
  context.on("response", (response) => {
    if (response.status() >= 400) observed.failedRequests.push(`${response.url()}: HTTP ${response.status()}`);
  });
  return observed;
}

/**
 * Headless Chromium with a fresh temporary profile (playwright's default for launch()). `webgl`:
 * WebGL2 from SwiftShader, asked for by name: Chromium no longer falls back to it by itself on a
 * machine without a GPU (Chromium's SwiftShader deprecation, M139); else no GPU at all.
 */
export async function launchChromium({ webgl = false }: { webgl?: boolean } = {}): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      ...(webgl ? ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"] : ["--disable-gpu"]),
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** The terminal's whole buffer (scrollback included), one line per row, trailing blanks trimmed. */
export async function screenText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const term = (globalThis as unknown as TerminalGlobals).entryway?.terminal;
    if (!term) return "";
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n");
  });
}

export async function waitForText(page: Page, pattern: RegExp, timeoutMs = 45_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await screenText(page);
    const match = text.match(pattern);
    if (match) return match;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${pattern}; terminal:\n${text.trimEnd().split("\n").slice(-15).join("\n")}`,
      );
    await page.waitForTimeout(100);
  }
}

export async function typeLine(page: Page, text: string): Promise<void> {
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}
