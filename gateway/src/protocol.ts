// Entry's protobuf3 messages (proto/message.proto), loaded with protobufjs.
import protobuf from "protobufjs";
import { fileURLToPath } from "node:url";

const root = protobuf.loadSync(fileURLToPath(new URL("../proto/message.proto", import.meta.url)));
const RequestMessage = root.lookupType("entry.RequestMessage");
const ResponseMessage = root.lookupType("entry.ResponseMessage");

export const RequestType = { PLAIN: 0, WINCH: 1, AUTH: 2, EOF: 3 } as const;
export const ResponseType = { STDOUT: 0, STDERR: 1, CLOSE: 2, PING: 3 } as const;

/** Machine-readable close reasons carried in ResponseMessage.closeCode (an extension; README "Close codes"). */
export type CloseCode =
  | "exit" // the shell ended by itself; exitCode is set when the backend reported it
  | "denied" // authorization refused
  | "unauthenticated" // no token
  | "not-found" // the target does not exist or is not running
  | "bad-request" // unusable target or malformed message
  | "limit" // per-user or per-replica session limit
  | "idle-timeout"
  | "expired" // the token expired, or the session reached maxSessionSeconds
  | "shutdown" // the gateway is stopping
  | "backend-error"
  | "recording-failed" // the session's recording could not be written (refused at start, or ended)
  | "frame-too-large"
  | "client-gone"; // only in audit records: the client vanished

/** protobufjs yields a Buffer, a Uint8Array, or an empty array for a missing bytes field. */
function bytes(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.length);
  return Buffer.alloc(0);
}

export interface Request {
  msgType: number;
  content: Buffer;
}

/** Decodes a client frame. Throws on malformed protobuf; unknown msgType values are returned as-is. */
export function decodeRequest(frame: Uint8Array): Request {
  const message = RequestMessage.decode(frame) as unknown as { msgType?: number; content?: unknown };
  return { msgType: message.msgType ?? 0, content: bytes(message.content) };
}

export function encodeRequest(msgType: number, content: Uint8Array | string): Buffer {
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  return Buffer.from(RequestMessage.encode(RequestMessage.create({ msgType, content: bytes })).finish());
}

export interface Response {
  msgType: number;
  content: Buffer;
  exitCode?: number;
  closeCode?: string;
}

export function encodeResponse(response: Response): Buffer {
  return Buffer.from(ResponseMessage.encode(ResponseMessage.create(response)).finish());
}

/**
 * The same bytes as encodeResponse for a message with only msgType and content (STDOUT, STDERR, PING),
 * built with one copy of the content: the bulk path's encoder. Protobuf wire format
 * (https://protobuf.dev/programming-guides/encoding/): field 1 as tag 0x08 and a varint, field 2 as
 * tag 0x12, the length as a varint, and the bytes; like protobufjs for proto3, a field at its default
 * (msgType 0, empty content) is left out.
 */
export function encodeOutput(msgType: number, content: Uint8Array): Buffer {
  const typeBytes = msgType === 0 ? 0 : 2; // every ResponseType fits one varint byte
  let lengthBytes = 1;
  for (let rest = content.length >>> 7; rest > 0; rest >>>= 7) lengthBytes++;
  const contentBytes = content.length === 0 ? 0 : 1 + lengthBytes + content.length;
  const frame = Buffer.allocUnsafe(typeBytes + contentBytes);
  let offset = 0;
  if (typeBytes > 0) {
    frame[offset++] = 0x08;
    frame[offset++] = msgType;
  }
  if (contentBytes > 0) {
    frame[offset++] = 0x12;
    let length = content.length;
    while (length > 0x7f) {
      frame[offset++] = (length & 0x7f) | 0x80;
      length >>>= 7;
    }
    frame[offset++] = length;
    frame.set(content, offset);
  }
  return frame;
}

export function decodeResponse(frame: Uint8Array): Response {
  const message = ResponseMessage.decode(frame) as unknown as {
    msgType?: number;
    content?: unknown;
    exitCode?: number | null;
    closeCode?: string;
  };
  const response: Response = { msgType: message.msgType ?? 0, content: bytes(message.content) };
  if (message.exitCode !== undefined && message.exitCode !== null) response.exitCode = message.exitCode;
  if (message.closeCode) response.closeCode = message.closeCode;
  return response;
}

export const MAX_TERMINAL_DIMENSION = 4096;

/**
 * Parses WINCH content "<cols> <rows>". Returns null for anything that is not two positive integers
 * (ignored by the session); values above MAX_TERMINAL_DIMENSION are clamped to it.
 */
export function parseWinch(content: Buffer): { cols: number; rows: number } | null {
  const match = /^\s*(\d{1,9})\s+(\d{1,9})\s*$/.exec(content.toString("latin1"));
  if (!match) return null;
  const cols = Number(match[1]);
  const rows = Number(match[2]);
  if (cols < 1 || rows < 1) return null;
  return { cols: Math.min(cols, MAX_TERMINAL_DIMENSION), rows: Math.min(rows, MAX_TERMINAL_DIMENSION) };
}
