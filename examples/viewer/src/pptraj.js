// Streaming reader of the .pptraj format (docs/trajectory.md): records are parsed as the bytes
// arrive, so a long run starts playing before it is loaded. Plain or gzip (detected from the
// first two bytes, 1f 8b, and inflated with the browser's DecompressionStream).

export const TAG_HEADER = 1;
export const TAG_BODY = 2;
export const TAG_FRAME = 3;
const MAGIC = 'PPTRAJ1\n';

// Parses pushed chunks into records. handlers: onHeader(json), onBody(json),
// onFrame({step, t, bodyCount, poses: Float64Array(7 n), contacts: [{a, b, depth, point}]}).
export class PptrajParser {
  constructor(handlers) {
    this.handlers = handlers;
    this.chunks = [];      // pending bytes, not yet a whole record
    this.pending = 0;
    this.sawMagic = false;
    this.sawHeader = false;
    this.offset = 0;       // bytes consumed, for error messages
    this.decoder = new TextDecoder('utf-8', { fatal: true });
  }

  // Joins the pending chunks into one array of at least `need` bytes (they are short: one
  // record at a time is assembled).
  take(need) {
    if (this.pending < need) return null;
    let joined;
    if (this.chunks[0].length >= need) {
      joined = this.chunks[0];
    } else {
      joined = new Uint8Array(this.pending);
      let at = 0;
      for (const c of this.chunks) { joined.set(c, at); at += c.length; }
      this.chunks = [joined];
    }
    return joined;
  }

  consume(n) {
    const first = this.chunks[0];
    this.chunks[0] = first.subarray(n);
    if (this.chunks[0].length === 0) this.chunks.shift();
    this.pending -= n;
    this.offset += n;
  }

  push(chunk) {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.pending += chunk.length;
    for (;;) {
      if (!this.sawMagic) {
        const b = this.take(8);
        if (!b) return;
        const magic = String.fromCharCode(...b.subarray(0, 8));
        if (magic !== MAGIC) throw new Error('not a pptraj file (bad magic)');
        this.consume(8);
        this.sawMagic = true;
        continue;
      }
      const head = this.take(8);
      if (!head) return;
      const view = new DataView(head.buffer, head.byteOffset, 8);
      const tag = view.getUint32(0, true);
      const bytes = view.getUint32(4, true);
      const rec = this.take(8 + bytes);
      if (!rec) return;
      const payload = rec.subarray(8, 8 + bytes);
      this.record(tag, payload);
      this.consume(8 + bytes);
    }
  }

  // The stream ended: anything left over is a truncated record.
  end() {
    if (!this.sawMagic) throw new Error('not a pptraj file (shorter than its magic)');
    if (this.pending > 0) throw new Error(`truncated record at byte ${this.offset}`);
    if (!this.sawHeader) throw new Error('no HEADER record');
  }

  record(tag, payload) {
    if (!this.sawHeader && tag !== TAG_HEADER) throw new Error('the first record is not a HEADER');
    if (tag === TAG_HEADER) {
      const h = JSON.parse(this.decoder.decode(payload));
      if (h.format !== 'pptraj' || h.version !== 1) throw new Error('not a pptraj version 1 HEADER');
      this.sawHeader = true;
      this.handlers.onHeader(h);
    } else if (tag === TAG_BODY) {
      this.handlers.onBody(JSON.parse(this.decoder.decode(payload)));
    } else if (tag === TAG_FRAME) {
      this.handlers.onFrame(parseFrame(payload));
    } // unknown tags are skipped
  }
}

// FRAME: u32 step, u32 n, f64 t, n x 7 f64, u32 m, m x (i32 a, i32 b, f64 depth, f64 point[3]).
export function parseFrame(p) {
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  if (p.byteLength < 20) throw new Error('FRAME record too short');
  const step = v.getUint32(0, true);
  const n = v.getUint32(4, true);
  const t = v.getFloat64(8, true);
  if (p.byteLength < 20 + 56 * n) throw new Error('FRAME record too short for its bodies');
  const poses = new Float64Array(7 * n);
  for (let k = 0; k < 7 * n; ++k) poses[k] = v.getFloat64(16 + 8 * k, true);
  let at = 16 + 56 * n;
  const m = v.getUint32(at, true);
  at += 4;
  if (p.byteLength !== at + 40 * m) throw new Error('FRAME record size does not match its contacts');
  const contacts = new Array(m);
  for (let c = 0; c < m; ++c, at += 40) {
    contacts[c] = {
      a: v.getInt32(at, true),
      b: v.getInt32(at + 4, true),
      depth: v.getFloat64(at + 8, true),
      point: [v.getFloat64(at + 16, true), v.getFloat64(at + 24, true), v.getFloat64(at + 32, true)],
    };
  }
  return { step, t, bodyCount: n, poses, contacts };
}

// Reads a ReadableStream of bytes into the parser, inflating gzip. Resolves when done.
export async function readStream(stream, parser) {
  let reader = stream.getReader();
  let first = await reader.read();
  while (!first.done && first.value.length < 2) {
    const more = await reader.read();
    if (more.done) break;
    const joined = new Uint8Array(first.value.length + more.value.length);
    joined.set(first.value);
    joined.set(more.value, first.value.length);
    first = { done: false, value: joined };
  }
  if (first.done) { parser.end(); return; }
  const gzip = first.value[0] === 0x1f && first.value[1] === 0x8b;
  if (gzip) {
    // put the first chunk back in front of the rest, then inflate
    const rest = reader;
    const whole = new ReadableStream({
      start(controller) { controller.enqueue(first.value); },
      async pull(controller) {
        const r = await rest.read();
        if (r.done) controller.close(); else controller.enqueue(r.value);
      },
    });
    reader = whole.pipeThrough(new DecompressionStream('gzip')).getReader();
  } else {
    parser.push(first.value);
  }
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    parser.push(r.value);
  }
  parser.end();
}
