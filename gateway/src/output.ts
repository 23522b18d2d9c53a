// The output path of a session: the shell's output as Entry STDOUT/STDERR messages on the client's
// WebSocket, as fast as the socket takes them, and a single key's echo never held back.
//
// Where a gateway's CPU went on bulk output before (a profile of 128 MiB through `entryway serve`):
// about a third in garbage collection of the buffers made per chunk (one per socket read, one per
// encoded message) and a quarter in the socket writes, one per read of 4 to 16 KiB. So output is
// copied once, into frame buffers that are reused (a pool shared by every session: taken for a frame,
// given back once the socket has written it), the message's protobuf header goes into room kept in
// front of the content (no second copy to join them), and frames are made as large as the output
// allows without making anyone wait:
// - while an earlier frame is still being written, output gathers behind it (it could not go out
//   sooner anyway) and leaves, as one frame, when that write is done;
// - when the socket is idle, output goes at once, unless it is bulk (over 6 MiB/s lately): then the
//   frame waits up to 1 ms for the output behind it, or until it is full. A key's echo, a prompt, a
//   screen redrawn are never bulk; `cat` of a large file is, and gets frames several times larger.
// Small output on an idle socket (up to 1 KiB: an echo, a prompt) is encoded in a buffer of its own
// size instead, so that idle sessions hold no frame buffer at all.
import { encodeOutput } from "./protocol.js";
import { incompleteTailLength } from "./utf8.js";

/** Room kept in front of a frame's content for its header: msgType (2 bytes), the content's tag (1) and length (a varint, up to 5). */
const HEADROOM = 8;
/** Free frame buffers kept for reuse, per frame size: enough for a few sessions' windows; more are left to the garbage collector. */
const POOL_KEEP = 256;
/**
 * Bulk output: more than BULK_BYTES within BULK_WINDOW_MS (over 6 MiB/s; a person typing, a prompt,
 * a screen redrawn are far below). Then a frame waits up to GATHER_MS for the output behind it, so
 * that bulk goes out in large frames rather than one per read: podman writes out each packet it gets
 * from conmon, at most 8 KiB (libpod/oci_conmon_common.go httpAttachTerminalCopy, bufferSize; conmon
 * src/config.h STDIO_BUF_SIZE), less from a terminal, and the gateway reads them about as they come
 * (most reads of a terminal's bulk output were under 4 KiB).
 */
const BULK_BYTES = 64 * 1024;
const BULK_WINDOW_MS = 10;
const GATHER_MS = 1;
/** Output up to this size, on an idle socket and not bulk, is encoded in a buffer of its own size (below). */
const SMALL_BYTES = 1024;

class FramePool {
  private readonly free: Buffer[] = [];
  constructor(readonly size: number) {}

  take(): Buffer {
    // allocUnsafeSlow: a buffer of its own, not a slice of Node's shared pool, so it can be kept and reused.
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(buffer: Buffer): void {
    if (this.free.length < POOL_KEEP) this.free.push(buffer);
  }
}

const pools = new Map<number, FramePool>();
function poolFor(frameBytes: number): FramePool {
  let pool = pools.get(frameBytes);
  if (!pool) pools.set(frameBytes, (pool = new FramePool(HEADROOM + frameBytes)));
  return pool;
}

/** Where frames go: the WebSocket's send, whose callback says the socket has written the frame (or failed). */
export type FrameSend = (frame: Buffer, written: (error?: Error | null) => void) => void;

export interface OutputOptions {
  /** Largest content per message (outputFrameBytes). */
  frameBytes: number;
  /** Cut frames on UTF-8 character boundaries (a terminal: the content is text); else bytes (pipe mode). */
  text: boolean;
  /** Queued bytes above which onPause is called, and at or below which onResume follows (bufferHighBytes, bufferLowBytes). */
  highBytes: number;
  lowBytes: number;
  onPause(): void;
  onResume(): void;
}

/**
 * Frames output as Entry messages. `push` takes a chunk that is only valid during the call (the
 * Docker backend reads every stream into one shared buffer) and copies it into the current frame.
 */
export class OutputFramer {
  private readonly pool: FramePool;
  /** The frame being filled, its message type and how many content bytes it holds (after HEADROOM). */
  private current: Buffer | null = null;
  private currentType = 0;
  private filled = 0;
  /** Frames handed to the socket and not yet written, and their bytes (the backpressure window). */
  private inFlight = 0;
  private queuedBytes = 0;
  private paused = false;
  /** Sends a gathering frame when no more output came within GATHER_MS. */
  private gatherTimer: NodeJS.Timeout | undefined;
  /** Output since windowStart (ms), and whether the window before it, if it just ended, was bulk: how the rate is told. */
  private windowStart = 0;
  private windowBytes = 0;
  private bulkBefore = false;

  constructor(
    private readonly send: FrameSend,
    private readonly options: OutputOptions,
  ) {
    this.pool = poolFor(options.frameBytes);
  }

  /** Bytes handed to the socket and not yet written. */
  get queued(): number {
    return this.queuedBytes;
  }

  push(chunk: Uint8Array, msgType: number): void {
    if (chunk.length === 0) return;
    const now = Date.now();
    if (now - this.windowStart >= BULK_WINDOW_MS) {
      this.bulkBefore = this.windowBytes >= BULK_BYTES && now - this.windowStart < 2 * BULK_WINDOW_MS;
      this.windowStart = now;
      this.windowBytes = 0;
    }
    this.windowBytes += chunk.length;
    const bulk = this.bulkBefore || this.windowBytes >= BULK_BYTES;
    // Small output on an idle socket (an echo, a prompt) goes at once in a buffer of its size, from
    // Node's shared pool: a frame buffer is for output that fills one, and idle sessions keep none.
    if (
      !this.current &&
      this.inFlight === 0 &&
      !bulk &&
      chunk.length <= Math.min(SMALL_BYTES, this.options.frameBytes) &&
      !(this.options.text && incompleteTailLength(chunk) > 0)
    ) {
      this.sendFrame(encodeOutput(msgType, chunk), null);
      return;
    }
    if (this.current && this.currentType !== msgType) this.sendCurrent(true);
    let offset = 0;
    while (offset < chunk.length) {
      if (!this.current) {
        this.current = this.pool.take();
        this.currentType = msgType;
        this.filled = 0;
      }
      const room = this.options.frameBytes - this.filled;
      const take = Math.min(room, chunk.length - offset);
      this.current.set(chunk.subarray(offset, offset + take), HEADROOM + this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.options.frameBytes) this.sendCurrent(false);
    }
    if (this.inFlight > 0) return; // sent when the frame before it is written
    // The socket is idle: output goes at once, unless it is bulk, which waits a moment to fill the frame.
    if (!bulk) this.sendCurrent(false);
    else
      this.gatherTimer ??= setTimeout(() => {
        this.gatherTimer = undefined;
        if (this.inFlight === 0) this.sendCurrent(false);
      }, GATHER_MS);
  }

  /** Sends whatever is held, an incomplete last character included (the end of the output). */
  flush(): void {
    this.sendCurrent(true);
  }

  /**
   * Sends the current frame. A text frame ends on a character boundary: the bytes of a character
   * cut by the frame's end move to the next frame (all of them when `whole`, at the end of output,
   * or when the frame holds nothing else).
   */
  private sendCurrent(whole: boolean): void {
    const frame = this.current;
    if (!frame || this.filled === 0) return;
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    const contentEnd = HEADROOM + this.filled;
    let carry = 0;
    if (this.options.text && !whole) {
      carry = incompleteTailLength(frame.subarray(HEADROOM, contentEnd));
      if (carry === this.filled) {
        if (this.filled < this.options.frameBytes) return; // only the start of a character: wait for the rest
        carry = 0; // a frame of nothing but a broken character: send it as it is
      }
    }
    const length = this.filled - carry;
    const start = writeHeader(frame, this.currentType, length);
    this.current = null;
    this.filled = 0;
    if (carry > 0) {
      this.current = this.pool.take();
      frame.copy(this.current, HEADROOM, contentEnd - carry, contentEnd);
      this.filled = carry;
    }
    this.sendFrame(frame.subarray(start, HEADROOM + length), frame);
  }

  /** Hands a frame to the socket, counted in the window; `pooled`, the frame buffer to give back once written. */
  private sendFrame(frame: Buffer, pooled: Buffer | null): void {
    const size = frame.length;
    this.inFlight++;
    this.queuedBytes += size;
    this.send(frame, () => {
      this.inFlight--;
      this.queuedBytes -= size;
      if (pooled) this.pool.give(pooled);
      if (this.paused && this.queuedBytes <= this.options.lowBytes) {
        this.paused = false;
        this.options.onResume();
      }
      // What gathered while this frame was written goes now.
      if (this.inFlight === 0) this.sendCurrent(false);
    });
    if (!this.paused && this.queuedBytes > this.options.highBytes) {
      this.paused = true;
      this.options.onPause();
    }
  }
}

/**
 * Writes a message's protobuf header (msgType, then the content's tag and length) into the room in
 * front of the content at HEADROOM, ending there; returns where it starts. The same bytes as
 * protobuf.js's encoder (https://protobuf.dev/programming-guides/encoding/): field 1 as tag 0x08 and a
 * varint (left out at 0, as proto3 leaves out defaults), field 2 as tag 0x12, a varint length, the bytes.
 */
function writeHeader(frame: Buffer, msgType: number, length: number): number {
  let lengthBytes = 1;
  for (let rest = length >>> 7; rest > 0; rest >>>= 7) lengthBytes++;
  const start = HEADROOM - 1 - lengthBytes - (msgType === 0 ? 0 : 2);
  let at = start;
  if (msgType !== 0) {
    frame[at++] = 0x08;
    frame[at++] = msgType; // every ResponseType fits one varint byte
  }
  frame[at++] = 0x12;
  let rest = length;
  while (rest > 0x7f) {
    frame[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  frame[at] = rest;
  return start;
}
