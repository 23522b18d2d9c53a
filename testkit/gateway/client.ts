// A test client that speaks Entry's protocol, as Entry's own client would (token in access-token).
import WebSocket from "ws";
import { decodeResponse, encodeRequest, RequestType, ResponseType, type Response } from "../../gateway/src/protocol.js";

export interface Closed {
  reason: string;
  exitCode?: number;
  closeCode?: string;
  wsCode: number;
}

export class EntryClient {
  readonly frames: Response[] = [];
  private stdout: Buffer[] = [];
  private stdoutBytes = 0;
  private stderr: Buffer[] = [];
  private waiters: (() => void)[] = [];
  readonly closed: Promise<Closed>;
  closeMessage: Response | undefined;

  constructor(
    readonly ws: WebSocket,
    keepFrames = true,
  ) {
    this.closed = new Promise((resolve) => {
      ws.on("close", (wsCode) => {
        const close = this.closeMessage;
        resolve({
          reason: close?.content.toString("utf8") ?? "",
          wsCode,
          ...(close?.exitCode !== undefined ? { exitCode: close.exitCode } : {}),
          ...(close?.closeCode ? { closeCode: close.closeCode } : {}),
        });
        this.wake();
      });
    });
    ws.on("error", () => {});
    ws.on("message", (data: Buffer) => {
      const message = decodeResponse(data);
      if (keepFrames) this.frames.push(message);
      if (message.msgType === ResponseType.STDOUT) {
        this.stdout.push(message.content);
        this.stdoutBytes += message.content.length;
      }
      if (message.msgType === ResponseType.STDERR) this.stderr.push(message.content);
      if (message.msgType === ResponseType.CLOSE) this.closeMessage = message;
      this.wake();
    });
  }

  static connect(
    url: string,
    options: {
      token?: string;
      headers?: Record<string, string>;
      protocols?: string[];
      keepFrames?: boolean;
      origin?: string;
      localAddress?: string;
    } = {},
  ): Promise<EntryClient> {
    const headers = { ...(options.token ? { "access-token": options.token } : {}), ...options.headers };
    const ws = new WebSocket(url, options.protocols ?? [], {
      headers,
      perMessageDeflate: false,
      ...(options.origin ? { origin: options.origin } : {}),
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    const client = new EntryClient(ws, options.keepFrames ?? true);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(client));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  get output(): Buffer {
    if (this.stdout.length > 1) this.stdout = [Buffer.concat(this.stdout)];
    return this.stdout[0] ?? Buffer.alloc(0);
  }

  /** STDERR frames: only in pipe mode (tty=false); with a TTY, stderr is on the terminal, in STDOUT. */
  get errorOutput(): Buffer {
    return Buffer.concat(this.stderr);
  }

  get outputBytes(): number {
    return this.stdoutBytes;
  }

  get text(): string {
    return this.output.toString("utf8");
  }

  type(text: string | Buffer): void {
    this.ws.send(encodeRequest(RequestType.PLAIN, text));
  }

  /** Pipe mode: the end of stdin. */
  eof(): void {
    this.ws.send(encodeRequest(RequestType.EOF, ""));
  }

  winch(cols: number, rows: number): void {
    this.ws.send(encodeRequest(RequestType.WINCH, `${cols} ${rows}`));
  }

  sendRaw(frame: Buffer | string): void {
    this.ws.send(frame);
  }

  /**
   * Types `line` again every `everyMs` until the output matches. For answers that follow a WINCH:
   * the resize travels apart from stdin (Docker's POST /exec/{id}/resize, the kubelet's resize
   * channel), so a line typed right after it may run before the new size lands.
   */
  async retypeUntil(line: string, test: RegExp, timeoutMs = 15_000, everyMs = 1_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.type(line);
      try {
        await this.waitFor(test, Math.min(everyMs, Math.max(0, deadline - Date.now())));
        return;
      } catch (error) {
        if (Date.now() >= deadline || this.ws.readyState === WebSocket.CLOSED) throw error;
      }
    }
  }

  /** Waits until the output matches, or fails with the output so far. */
  async waitFor(test: RegExp | ((client: EntryClient) => boolean), timeoutMs = 15_000): Promise<void> {
    const check = () => (test instanceof RegExp ? test.test(this.text) : test(this));
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${String(test)}; output so far: ${JSON.stringify(this.text.slice(-500))}`,
        );
      if (this.ws.readyState === WebSocket.CLOSED && !check())
        throw new Error(
          `connection closed while waiting for ${String(test)}: ${JSON.stringify(this.closeMessage?.content.toString() ?? "")}; output: ${JSON.stringify(this.text.slice(-500))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
