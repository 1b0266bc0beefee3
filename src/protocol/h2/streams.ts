/**
 * The stream table of one connection (state.ts `streams`, `history`): how streams end (both sides'
 * END_STREAM, a reset either way, an upload stopped after its answer), what a frame on a stream that is
 * not open gets (history.ts decides), and the ends of the connection that wait for the table to empty:
 * the graceful close (GOAWAY, then end once the last stream closes), the peer's FIN and the socket's close.
 *
 * Stream states (RFC 9113 §5.1): an answer sent before the client finished sending leaves the stream
 * half-closed (local): it stays open here, its frames are still checked (flow control, content-length,
 * trailers), its DATA is dropped, and once the client has sent half a window more it is asked to stop
 * (RST_STREAM NO_ERROR, §8.1). Closed streams go to a bounded record (history.ts) that decides what a
 * late frame on them gets.
 */
import { DATA, H2Error, type HEADERS, NO_ERROR, PROTOCOL_ERROR, STREAM_CLOSED } from "./frames.js";
import { type ClosedFate, closedStreamAction } from "./history.js";
import { end, goaway, type H2State, resetId, windowUpdate0 } from "./state.js";
import type { H2Stream } from "./stream.js";

/** Stream `id` is idle: above the highest the client opened, or even (we never push). */
export function idle(c: H2State, id: number): boolean {
  return id > c.lastStreamId || (id & 1) === 0;
}

/** RST_STREAM `code` on open stream `s`, reported to `onError`, and close it. */
export function reset(c: H2State, s: H2Stream, code: number, why = `code ${code}`): void {
  c.opts.onError(new H2Error(code, `stream ${s.id} reset: ${why}`), "stream");
  resetId(c, s.id, code);
  closeStream(c, s, "reset-sent");
}

/** RST_STREAM NO_ERROR on a stream we answered while the client was still sending (RFC 9113 §8.1). */
export function stopUpload(c: H2State, s: H2Stream): void {
  resetId(c, s.id, NO_ERROR);
  closeStream(c, s, "reset-sent");
}

/** Going away: answered streams whose client is still sending are stopped rather than waited for. */
export function stopUploads(c: H2State): void {
  for (const s of c.streams.values()) if (s.localEnded) stopUpload(c, s);
}

/** The request of `s` is complete: its call runs once the chunk is read. */
export function remoteEnd(c: H2State, s: H2Stream): void {
  s.remoteEnded = true;
  if (s.localEnded) closeStream(c, s, "ended");
  else if (s.handler !== undefined) c.ready.push(s);
}

/** Our side of `s` ended (END_STREAM sent). */
export function localEnd(c: H2State, s: H2Stream): void {
  s.localEnded = true;
  if (s.remoteEnded) {
    closeStream(c, s, "ended");
    return;
  }
  // Answered before the client finished sending: half-closed (local). The call is over; the stream
  // stays open to check what the client still sends (see the module comment).
  const handler = s.handler;
  s.handler = undefined;
  handler?.closed();
  if (c.goingAway || c.peerEnded) stopUpload(c, s);
}

/** `s` leaves the table with `fate`: its held and parked bytes are let go, its call told. */
export function closeStream(c: H2State, s: H2Stream, fate: ClosedFate): void {
  if (s.isClosed) return;
  s.isClosed = true;
  c.history.closed(s.id, fate);
  if (s.pending !== undefined) c.unsent -= s.pending.length;
  if (s.held > 0) {
    c.flow.release(s.held);
    s.held = 0;
    windowUpdate0(c);
  }
  s.pending = undefined;
  s.pendingTrailers = undefined;
  if (s.queued) {
    s.queued = false;
    const at = c.blocked.indexOf(s);
    if (at >= 0) c.blocked.splice(at, 1);
  }
  c.streams.delete(s.id);
  s.handler?.closed();
  if (c.streams.size === 0 && (c.goingAway || c.peerEnded)) close(c);
}

/** DATA or HEADERS on a client stream that is closed or was never opened (history.ts says how). */
export function notOpen(c: H2State, type: typeof DATA | typeof HEADERS, id: number): void {
  const fate = c.history.fate(id);
  const action = closedStreamAction(type, fate);
  if (action === "ignore") return;
  const what = `${type === DATA ? "DATA" : "HEADERS"} on stream ${id}`;
  if (action === "reset-stream-closed") {
    c.opts.onError(new H2Error(STREAM_CLOSED, `${what} after the client reset it`), "stream");
    resetId(c, id, STREAM_CLOSED);
    c.history.closed(id, "reset-sent");
    return;
  }
  if (action === "connection-protocol-error")
    throw new H2Error(PROTOCOL_ERROR, `${what}, below the last opened stream ${c.lastStreamId}`);
  throw new H2Error(
    STREAM_CLOSED,
    fate === "ended" ? `${what} after its END_STREAM` : `${what}, which was never opened`,
  );
}

/**
 * A stream error on `id` in whatever state it is: an open stream is reset; a closed one gets
 * RST_STREAM unless we reset it already; an idle one cannot take RST_STREAM (RFC 9113 §6.4), so the
 * connection ends with `code`.
 */
export function streamError(c: H2State, id: number, code: number, why: string): void {
  const s = c.streams.get(id);
  if (s !== undefined) {
    reset(c, s, code, why);
    return;
  }
  if (idle(c, id)) throw new H2Error(code, `${why} (idle stream ${id})`);
  if (c.history.fate(id) === "reset-sent") return;
  c.opts.onError(new H2Error(code, `${why} (stream ${id})`), "stream");
  resetId(c, id, code);
  c.history.closed(id, "reset-sent");
}

/** Graceful close: GOAWAY, no new streams; ends once the open ones finish (at once without any). */
export function close(c: H2State): void {
  if (c.dead) return;
  if (!c.goingAway) {
    c.goingAway = true;
    goaway(c, NO_ERROR);
  }
  stopUploads(c);
  if (c.streams.size === 0) end(c);
}

/** The peer sent FIN. */
export function onEnd(c: H2State): void {
  // An HTTP/2 client that is done (or gone). Say goodbye and end; its calls still in flight are
  // cancelled when the socket closes.
  c.peerEnded = true;
  if (c.dead) return;
  if (!c.goingAway) {
    c.goingAway = true;
    goaway(c, NO_ERROR);
  }
  end(c);
}

/** The socket closed: every stream still open closes, the close listeners run (once). */
export function onClose(c: H2State): void {
  c.dead = true;
  if (c.closeHandled) return;
  c.closeHandled = true;
  clearInterval(c.timer);
  c.flow.close();
  c.ready = [];
  const streams = [...c.streams.values()];
  c.streams.clear();
  c.blocked = [];
  for (const s of streams) {
    s.isClosed = true;
    s.handler?.closed();
  }
  const listeners = c.closeListeners;
  c.closeListeners = [];
  for (const l of listeners) l();
}

/** Cut at once: its streams are closed before this returns. */
export function destroy(c: H2State): void {
  c.dead = true;
  c.socket.destroy();
  onClose(c);
}
