// One deadline for a whole connection to the gateway: TCP connect, TLS handshake, the WebSocket
// upgrade (or the HTTP response) and the gateway's authorization, on one timer, so
// --connect-timeout 2 means 2 s in all (a timeout per stage, or an idle timer restarted by each
// stage's bytes, adds them up). The stage it ran out in is named in the message.
import net from "node:net";
import tls from "node:tls";

export type Stage = "TCP connect" | "TLS handshake" | "WebSocket upgrade" | "HTTP response" | "authorization";

export class ConnectDeadline {
  stage: Stage = "TCP connect";
  private readonly timer: NodeJS.Timeout;
  private over = false;

  constructor(
    readonly timeoutMs: number,
    onExpire: (deadline: ConnectDeadline) => void,
  ) {
    this.timer = setTimeout(() => {
      this.over = true;
      onExpire(this);
    }, timeoutMs);
  }

  /** Moves on to `stage`, unless the deadline has passed or was met. */
  enter(stage: Stage): void {
    if (!this.over) this.stage = stage;
  }

  /** The connection is up: the deadline no longer applies. */
  met(): void {
    this.over = true;
    clearTimeout(this.timer);
  }

  get pending(): boolean {
    return !this.over;
  }

  /** "timed out after 2 s in the TLS handshake" */
  describe(): string {
    return `timed out after ${this.timeoutMs / 1000} s in the ${this.stage}`;
  }

  /**
   * A createConnection for ws and node:http(s) that marks the TCP and TLS stages, then `next`.
   * The TLS options are ws's own (tlsConnect in ws/lib/websocket.js): SNI from the host name, none for an address.
   */
  connector(secure: boolean, next: Stage): (options: object) => net.Socket {
    return (given) => {
      // node:http passes the request's path too, which net.connect would take for a Unix socket's.
      const { path: _requestPath, ...options } = given as tls.ConnectionOptions & { path?: string; host?: string };
      let socket: net.Socket;
      if (secure) {
        const servername = options.servername ?? (net.isIP(options.host ?? "") ? "" : options.host);
        socket = tls.connect({ ...options, ...(servername ? { servername } : {}) });
        socket.once("connect", () => this.enter("TLS handshake"));
        socket.once("secureConnect", () => this.enter(next));
      } else {
        socket = net.connect(options as net.TcpNetConnectOpts);
        socket.once("connect", () => this.enter(next));
      }
      return socket;
    };
  }
}
