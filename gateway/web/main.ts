// The web terminal: sign in (OIDC authorization code + PKCE when the gateway is configured for it,
// else a pasted token kept only for this tab), pick a target or follow a deep link (the page's query
// string is the WebSocket endpoint's: ?container=..., ?namespace=..&pod=.., ?namespace=..&workload=..&instance=..),
// and an xterm.js terminal that fills the window, follows its size (WINCH), and says why a session ended.
import { FitAddon } from "@xterm/addon-fit";
import type { Terminal } from "@xterm/xterm";
import { INPUT_FRAME_BYTES } from "../src/wire.js";
import { decodeResponse, encodeRequest, RequestType, ResponseType, type Response } from "./codec.js";
import { beginOidcSignIn, completeOidcSignIn, type OidcSettings } from "./oidc.js";
import { $, show, TOKEN_KEY } from "./page.js";
import { openTerminal, styleElementsWithNonce } from "./xterm-setup.js";
import "./style.css";

interface PageConfig {
  /** The WebSocket endpoint's path. */
  path: string;
  backend: "kubernetes" | "docker";
  oidc: OidcSettings | null;
}

const TARGET_KEYS = ["namespace", "pod", "workload", "instance", "container"] as const;

styleElementsWithNonce();

function setStatus(text: string): void {
  $("status").textContent = text;
}

function targetFromQuery(): URLSearchParams | null {
  const query = new URLSearchParams(location.search);
  const target = new URLSearchParams();
  for (const key of TARGET_KEYS) {
    const value = query.get(key);
    if (value) target.set(key, value);
  }
  return target.has("container") || target.has("namespace") ? target : null;
}

function describe(target: URLSearchParams): string {
  if (!target.has("namespace")) return target.get("container") ?? "";
  const where = target.has("pod") ? target.get("pod") : `${target.get("workload")}#${target.get("instance")}`;
  return `${target.get("namespace")}/${where}${target.has("container") ? "/" + target.get("container") : ""}`;
}

function showOnly(section: "sign-in" | "picker" | "terminal-view"): void {
  for (const id of ["sign-in", "picker", "terminal-view"]) show(id, id === section);
}

class TerminalSession {
  readonly term: Terminal;
  private readonly fit = new FitAddon();
  private ws: WebSocket | undefined;
  private closeMessage: Response | undefined;
  /** What the last session ended with, for people and tests. */
  ended: { text: string; exitCode?: number; closeCode?: string } | null = null;
  private readonly paintedBy: () => "webgl" | "dom";

  constructor(
    private readonly config: PageConfig,
    private readonly onAuthFailure: () => void,
  ) {
    ({ term: this.term, renderer: this.paintedBy } = openTerminal($("terminal"), { cursorBlink: true }));
    this.term.loadAddon(this.fit);
    new ResizeObserver(() => this.fitNow()).observe($("terminal"));
    this.term.onResize(({ cols, rows }) => this.send(RequestType.WINCH, `${cols} ${rows}`));
    this.term.onData((data) => this.send(RequestType.PLAIN, data));
    this.term.onBinary((data) =>
      this.send(
        RequestType.PLAIN,
        Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff),
      ),
    );
    // Copy and paste: Ctrl+Shift+C / Ctrl+Shift+V (Ctrl+C and Ctrl+V belong to the shell); the
    // browser's own copy and paste (menu, middle click, Cmd+C/V) work too.
    this.term.attachCustomKeyEventHandler((event) => {
      if (event.type !== "keydown" || !event.ctrlKey || !event.shiftKey) return true;
      if (event.code === "KeyC") {
        const selection = this.term.getSelection();
        if (selection) void navigator.clipboard.writeText(selection);
        event.preventDefault();
        return false;
      }
      if (event.code === "KeyV") {
        void navigator.clipboard.readText().then((text) => this.term.paste(text));
        event.preventDefault();
        return false;
      }
      return true;
    });
  }

  /** Which xterm.js renderer paints the terminal, for people and tests. */
  get renderer(): "webgl" | "dom" {
    return this.paintedBy();
  }

  private fitNow(): void {
    if (!$("terminal-view").hidden) this.fit.fit();
  }

  private send(type: number, content: Uint8Array | string): void {
    const ws = this.ws;
    if (ws?.readyState !== WebSocket.OPEN) return;
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    // A paste can be longer than the gateway takes in one frame.
    for (let offset = 0; offset === 0 || offset < bytes.length; offset += INPUT_FRAME_BYTES)
      ws.send(encodeRequest(type, bytes.subarray(offset, offset + INPUT_FRAME_BYTES)));
  }

  connect(target: URLSearchParams, token: string): void {
    this.disconnect();
    this.ended = null;
    this.closeMessage = undefined;
    show("ended", false);
    show("bar-reconnect", false);
    this.term.reset();
    this.fitNow();
    $("target-label").textContent = describe(target);
    document.title = `${describe(target)} · Entryway`;
    setStatus("connecting…");
    const url = new URL(this.config.path, location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.search = target.toString();
    // Browsers cannot set headers on a WebSocket: the token goes in the first message (AUTH).
    const ws = new WebSocket(url, ["entryway.v1"]);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(encodeRequest(RequestType.AUTH, token));
      ws.send(encodeRequest(RequestType.WINCH, `${this.term.cols} ${this.term.rows}`));
      setStatus("connected");
      this.term.focus();
    };
    ws.onmessage = (event: MessageEvent<ArrayBuffer>) => {
      let message: Response;
      try {
        message = decodeResponse(new Uint8Array(event.data));
      } catch {
        return;
      }
      if (message.msgType === ResponseType.STDOUT || message.msgType === ResponseType.STDERR)
        this.term.write(message.content);
      else if (message.msgType === ResponseType.CLOSE) this.closeMessage = message;
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return; // replaced by a newer connection
      this.ws = undefined;
      this.showEnded(event.code, opened);
    };
  }

  disconnect(): void {
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000);
  }

  private showEnded(wsCode: number, opened: boolean): void {
    const close = this.closeMessage;
    const reason = close ? new TextDecoder().decode(close.content) : "";
    let text: string;
    if (!close) text = opened ? `Connection lost (WebSocket close ${wsCode}).` : "Could not connect to the gateway.";
    else if (!close.closeCode || close.closeCode === "exit")
      text =
        close.exitCode !== undefined
          ? `Session ended: exit code ${close.exitCode}.`
          : `Session ended: ${reason || "the shell ended"}.`;
    else text = `Session closed by the gateway: ${reason || close.closeCode} (${close.closeCode}).`;
    this.ended = {
      text,
      ...(close?.exitCode !== undefined ? { exitCode: close.exitCode } : {}),
      ...(close?.closeCode ? { closeCode: close.closeCode } : {}),
    };
    this.term.write(`\r\n\x1b[2m[entryway] ${text}\x1b[0m\r\n`);
    $("ended-text").textContent = text;
    const authFailed = close?.closeCode === "denied" || close?.closeCode === "unauthenticated";
    show("ended-sign-in", authFailed);
    // Without a token only signing in again helps.
    show("ended-reconnect", !authFailed);
    show("ended-other", !authFailed);
    show("ended", true);
    show("bar-reconnect", !authFailed);
    setStatus("disconnected");
    if (authFailed) this.onAuthFailure();
  }
}

async function main(): Promise<void> {
  const config = (await (await fetch("/web/config.json", { cache: "no-store" })).json()) as PageConfig;
  let session: TerminalSession | undefined;
  let target = targetFromQuery();

  if (config.oidc) {
    try {
      const token = await completeOidcSignIn(config.oidc);
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
    } catch (error) {
      $("sign-in-error").textContent = `Sign-in failed: ${error instanceof Error ? error.message : String(error)}`;
      show("sign-in-error");
    }
    target = targetFromQuery();
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  /** What the bar offers follows whether this tab holds a token. */
  const showSignedIn = () => {
    show("sign-out", token() !== null);
    show("bar-other", token() !== null);
  };
  const forgetToken = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignedIn();
  };

  function route(): void {
    showSignedIn();
    if (!token()) {
      session?.disconnect();
      showOnly("sign-in");
      show("oidc", config.oidc !== null);
      if (config.oidc) $("oidc-issuer").textContent = config.oidc.issuer;
      $("token").focus();
      return;
    }
    if (!target) {
      session?.disconnect();
      showOnly("picker");
      $("target-label").textContent = "";
      setStatus("");
      return;
    }
    showOnly("terminal-view");
    session ??= new TerminalSession(config, forgetToken); // a denied or unauthenticated session ends the token
    session.connect(target, token()!);
  }

  // Sign in
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $<HTMLTextAreaElement>("token").value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $<HTMLTextAreaElement>("token").value = "";
    show("sign-in-error", false);
    route();
  });
  $("oidc-sign-in").addEventListener("click", () => void beginOidcSignIn(config.oidc!, location.search));
  $("sign-out").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    route();
  });

  // Pick a target
  for (const element of document.querySelectorAll<HTMLElement>("[data-backend]"))
    element.hidden = element.dataset.backend !== config.backend;
  $("container-label").textContent = config.backend === "docker" ? "Container (name or id)" : "Container (optional)";
  const kindInputs = document.querySelectorAll<HTMLInputElement>('input[name="kind"]');
  const kind = () => [...kindInputs].find((input) => input.checked)?.value ?? "pod";
  for (const input of kindInputs) {
    input.addEventListener("change", () => {
      for (const element of document.querySelectorAll<HTMLElement>("[data-kind]"))
        element.hidden = element.dataset.kind !== kind();
    });
  }
  $("target-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = (id: string) => $<HTMLInputElement>(id).value.trim();
    const picked = new URLSearchParams();
    if (config.backend === "kubernetes") {
      picked.set("namespace", value("namespace"));
      if (kind() === "pod") picked.set("pod", value("pod"));
      else {
        picked.set("workload", value("workload"));
        picked.set("instance", value("instance") || "0");
      }
      if (value("container")) picked.set("container", value("container"));
    } else picked.set("container", value("container"));
    const missing = [...picked].filter(([, v]) => !v).map(([k]) => k);
    if (missing.length > 0) {
      $("picker-error").textContent = `Fill in: ${missing.join(", ")}`;
      show("picker-error");
      return;
    }
    show("picker-error", false);
    target = picked;
    history.pushState(null, "", `/?${picked}`); // a deep link to this target
    route();
  });
  const pickAnother = () => {
    target = null;
    history.pushState(null, "", "/");
    route();
  };
  $("bar-other").addEventListener("click", pickAnother);
  $("ended-other").addEventListener("click", pickAnother);
  const reconnect = () => route();
  $("bar-reconnect").addEventListener("click", reconnect);
  $("ended-reconnect").addEventListener("click", reconnect);
  $("ended-sign-in").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    route();
  });
  window.addEventListener("popstate", () => {
    target = targetFromQuery();
    route();
  });

  // For automation and tests: the terminal, the last session's end, the renderer in use.
  Object.defineProperty(window, "entryway", {
    value: {
      get terminal() {
        return session?.term;
      },
      get ended() {
        return session?.ended ?? null;
      },
      get renderer() {
        return session?.renderer;
      },
    },
  });
  route();
}

main().catch((error: unknown) => {
  document.body.textContent = `Entryway could not start: ${error instanceof Error ? error.message : String(error)}`;
});
