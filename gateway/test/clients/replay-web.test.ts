// The replay page in headless Chromium (Debian's, driven by playwright-core) against a recording
// gateway on podman: a session typed in the web terminal is recorded; a reviewer lists it on
// /replay, replays it, and xterm.js's buffer holds the same text the session's terminal showed;
// seeking to the start empties the screen, seeking to the end and replaying at 8x rebuild it. A
// user outside the reviewer groups is sent back to sign in. No CSP violation, no console error.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { webAssets } from "../../src/web-assets.js";
import { buildWebAssets } from "../../web/build.js";
import { tokenAuthorizer } from "../../../testkit/gateway/gateway.js";
import { describeNeeding } from "../../../testkit/gateway/tools.js";
import { podmanAvailable, startClientBed, type ClientBed } from "./bed.js";
import { CHROMIUM, launchChromium, observePages, type Observed } from "../../../testkit/gateway/browser.js";

interface XtermLike {
  buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined } };
}
/** What the tests read in the pages (typed here: the gateway's TypeScript has no DOM library). */
interface PageGlobals {
  entryway?: { terminal?: XtermLike; ended: { text: string } | null };
  entrywayReplay?: {
    terminal: XtermLike;
    state: { position: number; duration: number; playing: boolean; done: boolean; settled: boolean } | null;
  };
}

/** The terminal's lines (scrollback included), trailing blank lines dropped. */
function bufferText(page: Page, which: "session" | "replay"): Promise<string> {
  return page.evaluate((which) => {
    const globals = globalThis as unknown as PageGlobals;
    const term = which === "session" ? globals.entryway?.terminal : globals.entrywayReplay?.terminal;
    if (!term) return "";
    const lines: string[] = [];
    for (let i = 0; i < term.buffer.active.length; i++)
      lines.push(term.buffer.active.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n").trimEnd();
  }, which);
}

function replayState(page: Page) {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).entrywayReplay?.state ?? null);
}

async function seekTo(page: Page, seconds: number): Promise<void> {
  await page.locator("#seek").evaluate((element, value) => {
    const input = element as unknown as { value: string; dispatchEvent(event: unknown): void };
    input.value = String(value);
    input.dispatchEvent(new Event("input"));
  }, seconds);
  // xterm.js parses writes asynchronously: wait until the screen shows what the seek wrote.
  await expect.poll(() => replayState(page)).toMatchObject({ settled: true });
}

/** Waits (up to 60 s) until the replay has played to its end and its screen has settled; returns the screen's text. */
async function playedScreen(page: Page): Promise<string> {
  await expect
    .poll(() => replayState(page), { timeout: 60_000 })
    .toMatchObject({ done: true, playing: false, settled: true });
  return bufferText(page, "replay");
}

describeNeeding(
  { podman: podmanAvailable(), [CHROMIUM]: existsSync(CHROMIUM) },
  "replay page in Chromium against a recording gateway on podman",
  () => {
    let bed: ClientBed;
    let dir: string;
    let browser: Browser;
    let context: BrowserContext;
    let observed: Observed;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "entryway-replay-web-"));
      const assets = join(dir, "web");
      await buildWebAssets(assets);
      bed = await startClientBed("replay-web-box", {
        authorizer: tokenAuthorizer(),
        overrides: { recordDir: join(dir, "casts"), reviewerGroups: ["auditors"] },
        routes: (config) => [webAssets({ config, dir: assets })],
      });
      browser = await launchChromium({ webgl: true });
      context = await browser.newContext({ viewport: { width: 1000, height: 640 } });
      observed = await observePages(context);
    });
    afterAll(async () => {
      await browser?.close();
      await bed?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("replays a session recorded from the web terminal to the same screen, with seek and speed, for reviewers only", async () => {
      // The session, in the web terminal.
      const session = await context.newPage();
      await session.goto(`${bed.base}/?container=replay-web-box`);
      await session.locator("#token").fill("user:alice");
      await session.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => bufferText(session, "session"), { timeout: 45_000 }).toMatch(/^\/ #$/m);
      await session.keyboard.type(
        String.raw`printf '\033[1;33mbold yellow\033[0m 你好 😀 \033[44mblue\033[0m\n'; ls /; stty size`,
      );
      await session.keyboard.press("Enter");
      await expect.poll(() => bufferText(session, "session")).toMatch(/^\d+ \d+$/m);
      await session.keyboard.type("exit 0");
      await session.keyboard.press("Enter");
      await expect
        .poll(() => session.evaluate(() => (globalThis as unknown as PageGlobals).entryway?.ended?.text ?? null))
        .toBe("Session ended: exit code 0.");
      // What the session showed, without the page's own closing line (not part of the session's output).
      const shown = (await bufferText(session, "session")).replace(/\n*\[entryway\] Session ended: exit code 0\.$/, "");
      expect(shown).toMatch(/bold yellow 你好 😀 blue\n(.*\n)?bin +dev +etc/);

      // A reviewer lists it and replays it.
      const replay = await context.newPage();
      const response = await replay.goto(`${bed.base}/replay`);
      expect(response!.headers()["content-security-policy"]).toMatch(
        /^default-src 'none'; script-src 'self'; style-src 'self' 'nonce-[^']+'; connect-src 'self';/,
      );
      await replay.locator("#token").fill("user:rita:auditors");
      await replay.getByRole("button", { name: "Sign in" }).click();
      const rows = replay.locator("#list-rows tr");
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().locator("td").allTextContents()).toEqual([
        expect.any(String),
        "alice",
        "docker/replay-web-box",
        expect.stringMatching(/^0:\d\d$/),
        expect.stringMatching(/ KiB$/),
        "Replay",
      ]);
      await rows.first().getByRole("button", { name: "Replay" }).click();
      expect(await playedScreen(replay)).toBe(shown);
      expect(new URL(replay.url()).searchParams.get("id")).toMatch(/^\d{4}-\d\d-\d\dT/);

      // Seek: to the start (an empty screen), then to the end (the whole screen again).
      await seekTo(replay, 0);
      expect(await bufferText(replay, "replay")).toBe("");
      const { duration } = (await replayState(replay))!;
      await seekTo(replay, duration);
      expect(await bufferText(replay, "replay")).toBe(shown);
      // From the start again at 8x: the same screen.
      await seekTo(replay, 0);
      await replay.locator("#speed").selectOption("8");
      await replay.getByRole("button", { name: "Play" }).click();
      expect(await playedScreen(replay)).toBe(shown);

      // The deep link, in a tab of a user who is no reviewer: back to signing in, told why.
      const outsider = await context.newPage();
      await outsider.goto(replay.url());
      await outsider.locator("#token").fill("user:alice");
      await outsider.getByRole("button", { name: "Sign in" }).click();
      await expect
        .poll(() => outsider.locator("#sign-in-error").textContent())
        .toMatch(/refused this token: permission denied: alice is not in a reviewer group/);

      await replay.evaluate(() => 0); // a round trip: violation reports sent before it have arrived
      expect(observed.cspViolations).toEqual([]);
      // The outsider's refusal is the one failed request, and Chromium logs it as a console error.
      expect(observed.failedRequests).toEqual([
        expect.stringMatching(/^http:\/\/[^/]+\/v1\/recordings\/[^:]+: HTTP 403$/),
      ]);
      expect(observed.consoleErrors).toEqual([expect.stringMatching(/403/)]);
    });
  },
);
