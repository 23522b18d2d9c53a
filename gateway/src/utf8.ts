// Output framing that never splits a UTF-8 character across frames. Entry checked the buffer
// and kept the incomplete tail for the next frame; these helpers do the same, and also bound the
// frame size without cutting inside a character.

/** Bytes at the end of `buf` that start a multi-byte character whose remaining bytes have not arrived yet. */
export function incompleteTailLength(buf: Uint8Array): number {
  const len = buf.length;
  for (let back = 1; back <= Math.min(3, len); back++) {
    const byte = buf[len - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    if (byte < 0xc0) return 0; // ASCII: the tail is complete
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return needed > back ? back : 0;
  }
  return 0; // three continuation bytes with no lead: invalid data, pass it through unchanged
}

/** Splits `data` into pieces of at most `maxBytes`, each ending on a character boundary when the data allows. */
export function splitOnCharBoundaries(data: Buffer, maxBytes: number): Buffer[] {
  const pieces: Buffer[] = [];
  let start = 0;
  while (data.length - start > maxBytes) {
    let end = start + maxBytes;
    // If the next piece would start on a continuation byte, move the cut back to that character's lead byte.
    let cut = end;
    while (cut > start && end - cut < 3 && (data[cut]! & 0xc0) === 0x80) cut--;
    if (cut > start && (data[cut]! & 0xc0) !== 0x80) end = cut;
    pieces.push(data.subarray(start, end));
    start = end;
  }
  if (data.length > start) pieces.push(data.subarray(start));
  return pieces;
}

const NOTHING = Buffer.alloc(0);

/**
 * Holds back an incomplete trailing character until its remaining bytes arrive. `push` returns the
 * bytes that are safe to send now; `flush` returns whatever is left when the stream ends.
 */
export class Utf8Carry {
  private tail: Buffer = NOTHING;

  push(chunk: Buffer): Buffer {
    const data = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    const hold = incompleteTailLength(data);
    // Most chunks end on a character boundary: no new (empty) buffer for them.
    this.tail = hold === 0 ? NOTHING : Buffer.from(data.subarray(data.length - hold));
    return data.subarray(0, data.length - hold);
  }

  flush(): Buffer {
    const rest = this.tail;
    this.tail = NOTHING;
    return rest;
  }
}
