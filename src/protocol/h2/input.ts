/**
 * The input side of one connection: the client preface, frames parsed straight from the socket's
 * chunks and dispatched by type (request frames to request.ts, WINDOW_UPDATE to send.ts, the
 * connection-level frames here), then the calls whose request completed in the chunk. Input that opens
 * many streams, is many frames or many bytes is read in slices, the other connections' input between
 * them, so one peer's burst cannot hold the event loop.
 */
import {
  CONTINUATION,
  DATA,
  DEFAULT_MAX_FRAME,
  ENABLE_PUSH,
  ENHANCE_YOUR_CALM,
  FLAG_ACK,
  FLOW_CONTROL_ERROR,
  FRAME_SIZE_ERROR,
  GOAWAY,
  H2Error,
  HEADER_TABLE_SIZE,
  HEADERS,
  INITIAL_WINDOW_SIZE,
  MAX_FRAME_LIMIT,
  MAX_FRAME_SIZE,
  MAX_WINDOW,
  PING,
  PREFACE,
  PRIORITY,
  PROTOCOL_ERROR,
  PUSH_PROMISE,
  RST_STREAM,
  SETTINGS,
  WINDOW_UPDATE,
} from "./frames.js";
import { continuation, data, headers } from "./request.js";
import { initialWindow, windowUpdate } from "./send.js";
import { connectionError, countAck, type H2State, windowUpdate0 } from "./state.js";
import type { H2Stream } from "./stream.js";
import { close, closeStream, idle, stopUploads, streamError } from "./streams.js";

/** Streams a connection opens per slice of its input before the other connections get a turn. */
const STREAMS_PER_SLICE = 64;
/** Frames read per slice of a connection's input before the other connections get a turn. */
const FRAMES_PER_SLICE = 1024;
/** Input bytes read per slice before the other connections get a turn. */
const BYTES_PER_SLICE = 256 * 1024;

/** A chunk from the socket (or the rest of a slice). */
export function onData(c: H2State, chunk: Buffer): void {
  if (c.dead) return;
  let buf = chunk;
  const rest = c.input;
  if (rest !== undefined) {
    buf = Buffer.concat([rest, chunk]);
    c.input = undefined;
  }
  let pos = 0;
  try {
    if (!c.prefaceSeen) {
      const n = Math.min(buf.length, PREFACE.length);
      if (buf.compare(PREFACE, 0, n, 0, n) !== 0) throw new H2Error(PROTOCOL_ERROR, "bad connection preface");
      if (buf.length < PREFACE.length) {
        c.input = buf;
        return;
      }
      c.prefaceSeen = true;
      pos = PREFACE.length;
    }
    const len = buf.length;
    const opened = c.lastStreamId;
    let frames = 0;
    while (len - pos >= 9) {
      const size = (buf[pos] as number) * 65536 + ((buf[pos + 1] as number) << 8) + (buf[pos + 2] as number);
      if (size > DEFAULT_MAX_FRAME)
        throw new H2Error(FRAME_SIZE_ERROR, `frame of ${size} bytes exceeds SETTINGS_MAX_FRAME_SIZE`);
      const end = pos + 9 + size;
      if (end > len) break;
      const type = buf[pos + 3] as number;
      const flags = buf[pos + 4] as number;
      const id = buf.readUInt32BE(pos + 5) & 0x7fffffff;
      frame(c, type, flags, id, buf, pos + 9, end);
      pos = end;
      if (c.dead) return;
      // Fairness: input that opens many streams (or is many frames) is read in slices, the other
      // connections' input between them, so one peer's burst cannot hold the event loop.
      if (
        (++frames >= FRAMES_PER_SLICE || c.lastStreamId - opened >= STREAMS_PER_SLICE * 2) &&
        pos < len &&
        c.blockStream === 0
      ) {
        c.input = buf.subarray(pos);
        slice(c);
        break;
      }
    }
    if (pos < len && c.input === undefined) c.input = pos === 0 ? buf : buf.subarray(pos);
    if (c.ready.length > 0) runReady(c);
    // Bulk input (large uploads) yields too, once per slice of bytes: libuv hands over up to
    // 32 reads of one socket in a row, which would otherwise keep the other connections waiting.
    c.readBytes += chunk.length;
    if (c.readBytes >= BYTES_PER_SLICE && !c.slicing && !c.dead) {
      c.readBytes = 0;
      slice(c);
    }
  } catch (err) {
    connectionError(c, err);
  }
}

/** Stop reading; read the rest of the input at the next turn (then read the socket again). */
function slice(c: H2State): void {
  c.slicing = true;
  c.socket.pause();
  setImmediate(() => {
    c.slicing = false;
    if (c.dead) return;
    const rest = c.input;
    c.input = undefined;
    if (rest !== undefined) onData(c, rest);
    if (!c.slicing && !c.dead && !c.socket.writableNeedDrain) c.socket.resume();
  });
}

/** Run the calls whose request completed in this chunk and were not reset meanwhile. */
function runReady(c: H2State): void {
  const ready = c.ready;
  c.ready = [];
  for (let i = 0; i < ready.length; i++) {
    const s = ready[i] as H2Stream;
    if (s.isClosed) continue;
    s.handler?.run();
    // The call has its message now: the bytes it held are consumed.
    if (s.held > 0) {
      c.flow.release(s.held);
      s.held = 0;
    }
  }
  windowUpdate0(c);
}

function frame(
  c: H2State,
  type: number,
  flags: number,
  id: number,
  buf: Buffer,
  start: number,
  end: number,
): void {
  if (!c.settingsSeen) {
    if (type !== SETTINGS || (flags & FLAG_ACK) !== 0)
      throw new H2Error(PROTOCOL_ERROR, "the first frame of a connection must be SETTINGS");
    c.settingsSeen = true;
  }
  if (c.blockStream !== 0 && (type !== CONTINUATION || id !== c.blockStream))
    throw new H2Error(PROTOCOL_ERROR, "expected CONTINUATION of the open header block");
  switch (type) {
    case DATA:
      data(c, flags, id, buf, start, end);
      return;
    case HEADERS:
      headers(c, flags, id, buf, start, end);
      return;
    case CONTINUATION:
      continuation(c, flags, id, buf, start, end);
      return;
    case RST_STREAM: {
      if (id === 0) throw new H2Error(PROTOCOL_ERROR, "RST_STREAM on stream 0");
      if (end - start !== 4) throw new H2Error(FRAME_SIZE_ERROR, "RST_STREAM must be 4 bytes");
      if (idle(c, id)) throw new H2Error(PROTOCOL_ERROR, "RST_STREAM on an idle stream");
      const s = c.streams.get(id);
      if (s === undefined) return;
      // Rapid reset (CVE-2023-44487): streams the client resets before their answer are budgeted,
      // and open streaming answers (their headers go out at once; Envoy rarely resets them).
      if ((!s.headersSent || s.handler?.longLived === true) && !c.resets.take())
        throw new H2Error(ENHANCE_YOUR_CALM, "too many streams reset by the client");
      closeStream(c, s, "reset-received");
      return;
    }
    case SETTINGS:
      settings(c, flags, id, buf, start, end);
      return;
    case PING:
      if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "PING on a stream");
      if (end - start !== 8) throw new H2Error(FRAME_SIZE_ERROR, "PING must be 8 bytes");
      if ((flags & FLAG_ACK) === 0) {
        countAck(c);
        c.w.frameHeader(8, PING, FLAG_ACK, 0);
        c.w.bytes(buf, start, end);
      }
      return;
    case GOAWAY:
      if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "GOAWAY on a stream");
      if (end - start < 8) throw new H2Error(FRAME_SIZE_ERROR, "GOAWAY shorter than 8 bytes");
      c.peerEnded = true;
      stopUploads(c);
      if (c.streams.size === 0) close(c);
      return;
    case WINDOW_UPDATE:
      windowUpdate(c, id, buf, start, end);
      return;
    case PUSH_PROMISE:
      throw new H2Error(PROTOCOL_ERROR, "a client must not send PUSH_PROMISE");
    case PRIORITY:
      // Read and ignored (RFC 9113 deprecates the scheme); only its shape is checked, in any state.
      if (id === 0) throw new H2Error(PROTOCOL_ERROR, "PRIORITY on stream 0");
      if (end - start !== 5) streamError(c, id, FRAME_SIZE_ERROR, "PRIORITY frame not 5 bytes");
      else if ((buf.readUInt32BE(start) & 0x7fffffff) === id)
        streamError(c, id, PROTOCOL_ERROR, "PRIORITY: a stream cannot depend on itself");
      return;
    default:
      return; // unknown frame types are ignored
  }
}

function settings(c: H2State, flags: number, id: number, buf: Buffer, start: number, end: number): void {
  if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "SETTINGS on a stream");
  if ((flags & FLAG_ACK) !== 0) {
    if (end !== start) throw new H2Error(FRAME_SIZE_ERROR, "SETTINGS ACK with a payload");
    return;
  }
  if ((end - start) % 6 !== 0) throw new H2Error(FRAME_SIZE_ERROR, "SETTINGS length not a multiple of 6");
  const entries = (end - start) / 6;
  if (entries > c.limits.maxSettingsEntries)
    throw new H2Error(ENHANCE_YOUR_CALM, `SETTINGS frame of ${entries} entries`);
  let initial = -1;
  for (let p = start; p < end; p += 6) {
    const key = buf.readUInt16BE(p);
    const value = buf.readUInt32BE(p + 2);
    if (key === INITIAL_WINDOW_SIZE) {
      if (value > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE too large");
      initial = value; // applied once, below: the last value of the frame counts
    } else if (key === MAX_FRAME_SIZE) {
      if (value < DEFAULT_MAX_FRAME || value > MAX_FRAME_LIMIT)
        throw new H2Error(PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE ${value} out of range`);
      c.peerMaxFrame = value;
    } else if (key === ENABLE_PUSH) {
      if (value > 1) throw new H2Error(PROTOCOL_ERROR, `SETTINGS_ENABLE_PUSH ${value}`);
    } else if (key === HEADER_TABLE_SIZE && value !== c.peerTableSize) {
      // We never index, but the peer's decoder wants its new size acknowledged by a size update at
      // the start of our next block (RFC 7541 §4.2): we send 0, valid under any maximum.
      c.peerTableSize = value;
      c.tableSizeUpdate = true;
    }
  }
  countAck(c);
  c.w.frameHeader(0, SETTINGS, FLAG_ACK, 0);
  if (initial >= 0 && initial !== c.peerInitialWindow) initialWindow(c, initial);
}
