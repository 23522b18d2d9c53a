// Entry's two protobuf3 messages (gateway/proto/message.proto), encoded and decoded by hand for the
// browser: protobufjs generates code with `new Function`, which the page's CSP (no 'unsafe-eval')
// forbids, and the messages are small enough to need no library.
export const RequestType = { PLAIN: 0, WINCH: 1, AUTH: 2 } as const;
export const ResponseType = { STDOUT: 0, STDERR: 1, CLOSE: 2, PING: 3 } as const;

export interface Response {
  msgType: number;
  content: Uint8Array;
  exitCode?: number;
  closeCode?: string;
}

function varint(value: number, out: number[]): void {
  let v = value >>> 0;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

/** RequestMessage { RequestType msgType = 1; bytes content = 2; } */
export function encodeRequest(msgType: number, content: Uint8Array | string): Uint8Array {
  const body = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const head: number[] = [];
  if (msgType !== 0) {
    head.push(0x08);
    varint(msgType, head);
  }
  if (body.length > 0) {
    head.push(0x12);
    varint(body.length, head);
  }
  const frame = new Uint8Array(head.length + body.length);
  frame.set(head, 0);
  frame.set(body, head.length);
  return frame;
}

/** ResponseMessage { msgType = 1; bytes content = 2; optional sint32 exitCode = 3; string closeCode = 4; }; unknown fields are skipped. */
export function decodeResponse(frame: Uint8Array): Response {
  let pos = 0;
  const readVarint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= frame.length) throw new Error("truncated varint");
      const byte = frame[pos++]!;
      if (shift < 32) result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error("varint too long");
    }
  };
  const readBytes = (): Uint8Array => {
    const length = readVarint();
    if (pos + length > frame.length) throw new Error("truncated field");
    const bytes = frame.subarray(pos, pos + length);
    pos += length;
    return bytes;
  };
  const response: Response = { msgType: 0, content: new Uint8Array(0) };
  while (pos < frame.length) {
    const key = readVarint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (field === 1 && wire === 0) response.msgType = readVarint() >>> 0;
    else if (field === 2 && wire === 2) response.content = readBytes();
    else if (field === 3 && wire === 0) {
      const zigzag = readVarint() >>> 0;
      response.exitCode = (zigzag >>> 1) ^ -(zigzag & 1);
    } else if (field === 4 && wire === 2) response.closeCode = new TextDecoder().decode(readBytes());
    else if (wire === 0) readVarint();
    else if (wire === 2) readBytes();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
  if (pos > frame.length) throw new Error("truncated field");
  return response;
}
