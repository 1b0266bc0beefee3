/**
 * The send side of one connection: answers given at once (`respond`) or piece by piece (streaming calls:
 * `openAnswer`, `write`, `finish`), within the peer's connection and stream windows and its
 * SETTINGS_MAX_FRAME_SIZE, and the WINDOW_UPDATE and SETTINGS_INITIAL_WINDOW_SIZE that move those windows.
 *
 * DATA that does not fit waits in `s.pending` (with the trailers behind it) for the peer's WINDOW_UPDATE:
 * only streams held up by the connection window wait in its line (`blocked`), so no control frame walks
 * every waiting stream. Streaming answers written while the windows are shut park behind each other (in
 * order); parked bytes count against the unsent-answer budget, and `room` tells the call how much it may
 * still park so it can end its own stream first (the connection is cut only past the budget). Request
 * bytes a streaming call holds leave the receive hold when it reports them `consumed`.
 */
import {
  ENHANCE_YOUR_CALM,
  FLOW_CONTROL_ERROR,
  FRAME_SIZE_ERROR,
  H2Error,
  MAX_WINDOW,
  PROTOCOL_ERROR,
} from "./frames.js";
import { connectionError, type H2State, headerFrames, windowUpdate0 } from "./state.js";
import type { H2Stream } from "./stream.js";
import { idle, localEnd, reset } from "./streams.js";

const EMPTY = Buffer.alloc(0);

/** Send an answer on `s` (see H2Stream.respond). */
export function respond(
  c: H2State,
  s: H2Stream,
  headerBlock: Buffer,
  body: Buffer | undefined,
  trailerBlock: Buffer | undefined,
): void {
  if (s.isClosed || s.localEnded || c.dead) return;
  s.headersSent = true;
  const headersEnd = body === undefined && trailerBlock === undefined;
  headerFrames(c, s.id, headerBlock, headersEnd);
  if (headersEnd) {
    localEnd(c, s);
    return;
  }
  if (body !== undefined && body.length > 0) {
    const endWithData = trailerBlock === undefined;
    s.pendingTrailers = trailerBlock;
    sendData(c, s, body, endWithData);
    if (s.pending !== undefined) return;
    s.pendingTrailers = undefined;
    if (endWithData) return;
  }
  if (trailerBlock !== undefined) headerFrames(c, s.id, trailerBlock, true);
  else c.w.data(s.id, EMPTY, 0, 0, true);
  localEnd(c, s);
}

/** A streaming answer on `s`: the response HEADERS now, DATA through `write`, trailers by `finish`. */
export function openAnswer(c: H2State, s: H2Stream, headerBlock: Buffer): void {
  if (s.isClosed || s.localEnded || s.headersSent || c.dead) return;
  s.headersSent = true;
  headerFrames(c, s.id, headerBlock, false);
}

/** DATA of an open streaming answer (see H2Connection.write). False when anything is parked. */
export function write(c: H2State, s: H2Stream, data: Buffer): boolean {
  if (s.isClosed || s.localEnded || c.dead || s.pendingTrailers !== undefined) return false;
  const parked = s.pending;
  sendData(c, s, parked === undefined ? data : Buffer.concat([parked, data]), false);
  return s.pending === undefined;
}

/** End an open streaming answer with `trailerBlock`: now, or once its parked DATA is sent. */
export function finish(c: H2State, s: H2Stream, trailerBlock: Buffer): void {
  if (s.isClosed || s.localEnded || c.dead || s.pendingTrailers !== undefined) return;
  if (s.pending !== undefined) {
    s.pendingTrailers = trailerBlock;
    return;
  }
  headerFrames(c, s.id, trailerBlock, true);
  localEnd(c, s);
}

/** The streaming call on `s` consumed `n` request bytes: they leave the connection's hold. */
export function consumed(c: H2State, s: H2Stream, n: number): void {
  s.openedTick = -1; // long-lived now: out of the request deadline
  const k = Math.min(n, s.held);
  if (k <= 0) return;
  s.held -= k;
  c.flow.release(k);
  windowUpdate0(c);
}

/** Bytes `s` may still write before the unsent-answer budget is passed (see H2Connection.room). */
export function room(c: H2State, s: H2Stream): number {
  const parkable = Math.max(0, c.limits.maxUnsentBytes - c.unsent);
  if (s.pending !== undefined) return parkable;
  return parkable + Math.max(0, Math.min(c.sendWindow, s.sendWindow));
}

/** Send what fits of `data` now; the rest waits in `s.pending` for window. */
function sendData(c: H2State, s: H2Stream, data: Buffer, end: boolean): void {
  let off = 0;
  const len = data.length;
  while (off < len) {
    const room = Math.min(c.sendWindow, s.sendWindow, c.peerMaxFrame, len - off);
    if (room <= 0) break;
    const last = off + room === len;
    c.w.data(s.id, data, off, off + room, last && end);
    c.sendWindow -= room;
    s.sendWindow -= room;
    off += room;
  }
  const before = s.pending === undefined ? 0 : s.pending.length;
  if (off < len) {
    s.pending = off === 0 ? data : data.subarray(off);
    s.pendingEnd = end;
    c.unsent += len - off - before;
    // Only a stream held up by the connection window waits in its line; one held up by its own
    // window goes on at its own WINDOW_UPDATE (or SETTINGS).
    if (!s.queued && s.sendWindow > 0) {
      s.queued = true;
      c.blocked.push(s);
    }
    if (c.unsent > c.limits.maxUnsentBytes) {
      // Not destroyed here (an answer is being written): the GOAWAY goes out, the socket is cut
      // a second later if the peer does not close it.
      connectionError(
        c,
        new H2Error(ENHANCE_YOUR_CALM, `more than ${c.limits.maxUnsentBytes} answer bytes not read`),
      );
    }
    return;
  }
  c.unsent -= before;
  s.pending = undefined;
  if (end) localEnd(c, s);
}

/** The connection window grew: streams waiting for it go on, in order, while it lasts. */
function resumeBlocked(c: H2State): void {
  if (c.blocked.length === 0) return;
  const blocked = c.blocked;
  c.blocked = [];
  let i = 0;
  for (; i < blocked.length && c.sendWindow > 0 && !c.dead; i++) {
    const s = blocked[i] as H2Stream;
    s.queued = false;
    resume(c, s);
  }
  // Those not reached stay queued, ahead of any that queued again meanwhile.
  if (i < blocked.length) c.blocked = blocked.slice(i).concat(c.blocked);
}

/** Send what the windows now allow of `s`'s waiting DATA, then its trailers. */
function resume(c: H2State, s: H2Stream): void {
  const data = s.pending;
  if (data === undefined || s.isClosed) return;
  sendData(c, s, data, s.pendingEnd);
  if (s.pending !== undefined) return;
  const trailers = s.pendingTrailers;
  if (trailers !== undefined) {
    s.pendingTrailers = undefined;
    headerFrames(c, s.id, trailers, true);
    localEnd(c, s);
  }
}

/** The peer's SETTINGS_INITIAL_WINDOW_SIZE changed: one pass over the streams (RFC 9113 §6.9.2). */
export function initialWindow(c: H2State, value: number): void {
  const delta = value - c.peerInitialWindow;
  c.peerInitialWindow = value;
  const waiting: H2Stream[] = [];
  for (const s of c.streams.values()) {
    s.sendWindow += delta;
    if (s.sendWindow > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, "stream window overflow");
    if (delta > 0 && s.pending !== undefined && !s.queued) waiting.push(s);
  }
  for (const s of waiting) resume(c, s);
}

/** A WINDOW_UPDATE frame on `id` (0: the connection). */
export function windowUpdate(c: H2State, id: number, buf: Buffer, start: number, end: number): void {
  if (end - start !== 4) throw new H2Error(FRAME_SIZE_ERROR, "WINDOW_UPDATE must be 4 bytes");
  const increment = buf.readUInt32BE(start) & 0x7fffffff;
  if (id === 0) {
    if (increment === 0) throw new H2Error(PROTOCOL_ERROR, "WINDOW_UPDATE of 0");
    c.sendWindow += increment;
    if (c.sendWindow > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, "connection window overflow");
    resumeBlocked(c);
    return;
  }
  const s = c.streams.get(id);
  if (s === undefined) {
    if (idle(c, id)) throw new H2Error(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream");
    return; // closed: it may have crossed our END_STREAM or RST_STREAM
  }
  if (increment === 0) {
    reset(c, s, PROTOCOL_ERROR);
    return;
  }
  s.sendWindow += increment;
  if (s.sendWindow > MAX_WINDOW) {
    reset(c, s, FLOW_CONTROL_ERROR);
    return;
  }
  // A stream in the connection window's line waits there; one held up by its own window goes on.
  if (s.pending !== undefined && !s.queued) resume(c, s);
}
