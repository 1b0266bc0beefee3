/**
 * The request frames of one connection: HEADERS and CONTINUATION (a header block, HPACK-decoded into a
 * new stream or the trailers of an open one) and DATA (request bytes for the stream's call, within the
 * receive windows of RecvFlow and the stream). A request's call runs only once the frames of the chunk
 * that completed it are read (`ready`, input.ts), so a stream reset in the same chunk is never decoded
 * nor decided.
 *
 * Hardening (limits.ts, docs/security.md): header blocks are bounded in bytes, CONTINUATION frames and
 * decoded header-list octets; blocks refused for their size are budgeted, as are streams past
 * SETTINGS_MAX_CONCURRENT_STREAMS (refused).
 */
import { MAX_HEADER_LIST, MAX_HEADER_PAIRS } from "./fields.js";
import {
  COMPRESSION_ERROR,
  DATA,
  DEFAULT_WINDOW,
  ENHANCE_YOUR_CALM,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  FLOW_CONTROL_ERROR,
  H2Error,
  HEADERS,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  STREAM_CLOSED,
  WINDOW_UPDATE,
} from "./frames.js";
import { HpackError } from "./hpack.js";
import { type H2State, resetId, windowUpdate0 } from "./state.js";
import { H2Stream } from "./stream.js";
import { idle, notOpen, remoteEnd, reset, stopUpload } from "./streams.js";

/** Not a wire flag (those are 8 bits): a HEADERS frame whose priority names its own stream. */
const SELF_DEPENDENT = 0x100;

export function data(c: H2State, flags: number, id: number, buf: Buffer, start: number, end: number): void {
  if (id === 0) throw new H2Error(PROTOCOL_ERROR, "DATA on stream 0");
  c.activity++;
  let from = start;
  let to = end;
  if ((flags & FLAG_PADDED) !== 0) {
    // Checked first: a frame-level error whatever the stream's state (RFC 9113 §6.1).
    if (end === start) throw new H2Error(PROTOCOL_ERROR, "PADDED DATA without a pad length");
    const pad = buf[start] as number;
    from = start + 1;
    to = end - pad;
    if (to < from) throw new H2Error(PROTOCOL_ERROR, "DATA padding longer than the frame");
  }
  const size = end - start;
  const flow = c.flow;
  if (!flow.receive(size)) throw new H2Error(FLOW_CONTROL_ERROR, "DATA past the connection window");
  const s = c.streams.get(id);
  if (s === undefined) {
    if (idle(c, id)) throw new H2Error(PROTOCOL_ERROR, "DATA on an idle stream");
    // A stream closed (answered or reset) while the client was still sending: not kept.
    flow.discard(size);
    windowUpdate0(c);
    notOpen(c, DATA, id);
    return;
  }
  if (s.remoteEnded) {
    flow.discard(size);
    reset(c, s, STREAM_CLOSED);
    return;
  }
  s.recvWindow -= size;
  if (s.recvWindow < 0) {
    flow.discard(size);
    reset(c, s, FLOW_CONTROL_ERROR);
    return;
  }
  const ended = (flags & FLAG_END_STREAM) !== 0;
  if (s.contentLeft >= 0) {
    s.contentLeft -= to - from;
    if (s.contentLeft < 0 || (ended && s.contentLeft !== 0)) {
      flow.discard(size);
      reset(c, s, PROTOCOL_ERROR, "DATA does not add up to the request's content-length");
      return;
    }
  }
  const n = to - from;
  flow.discard(size - n); // padding
  if (n > 0 && s.handler !== undefined) {
    // The call keeps the bytes until its message is complete: a copy unless it completes now, so
    // a slow stream does not pin the whole input chunk.
    flow.hold(n);
    s.held += n;
    s.handler.push(ended ? buf.subarray(from, to) : Buffer.from(buf.subarray(from, to)));
  } else flow.discard(n);
  if (ended) remoteEnd(c, s);
  else if (!s.isClosed && s.recvWindow < DEFAULT_WINDOW / 2) {
    if (s.localEnded) {
      // Answered already: rather than take another window of DATA to drop, ask the client to stop.
      stopUpload(c, s);
      windowUpdate0(c);
      return;
    }
    // The call took the bytes: the stream may send more.
    c.w.frameHeader(4, WINDOW_UPDATE, 0, id);
    c.w.u32(DEFAULT_WINDOW - s.recvWindow);
    s.recvWindow = DEFAULT_WINDOW;
  }
  windowUpdate0(c);
}

export function headers(
  c: H2State,
  flags: number,
  id: number,
  buf: Buffer,
  start: number,
  end: number,
): void {
  if (id === 0) throw new H2Error(PROTOCOL_ERROR, "HEADERS on stream 0");
  c.activity++;
  let from = start;
  let to = end;
  if ((flags & FLAG_PADDED) !== 0) {
    if (end === start) throw new H2Error(PROTOCOL_ERROR, "PADDED HEADERS without a pad length");
    const pad = buf[start] as number;
    from++;
    to -= pad;
  }
  let blockFlags = flags;
  if ((flags & FLAG_PRIORITY) !== 0) {
    if (to - from >= 5 && (buf.readUInt32BE(from) & 0x7fffffff) === id) blockFlags |= SELF_DEPENDENT;
    from += 5;
  }
  if (to < from) throw new H2Error(PROTOCOL_ERROR, "HEADERS padding longer than the frame");
  if ((flags & FLAG_END_HEADERS) !== 0) {
    headerBlock(c, blockFlags, id, buf, from, to);
    return;
  }
  c.blockStream = id;
  c.blockFlags = blockFlags;
  c.blockParts = [Buffer.from(buf.subarray(from, to))];
  c.blockBytes = to - from;
  c.blockFrames = 0;
  c.blockTick = c.tick;
}

export function continuation(
  c: H2State,
  flags: number,
  id: number,
  buf: Buffer,
  start: number,
  end: number,
): void {
  if (c.blockStream === 0 || id !== c.blockStream)
    throw new H2Error(PROTOCOL_ERROR, "CONTINUATION without an open header block");
  c.blockBytes += end - start;
  const { maxHeaderBlock, maxContinuations } = c.limits;
  if (c.blockBytes > maxHeaderBlock)
    throw new H2Error(ENHANCE_YOUR_CALM, `header block larger than ${maxHeaderBlock} bytes`);
  if (++c.blockFrames > maxContinuations)
    throw new H2Error(ENHANCE_YOUR_CALM, `header block of more than ${maxContinuations} CONTINUATION frames`);
  if (end > start) c.blockParts.push(Buffer.from(buf.subarray(start, end)));
  if ((flags & FLAG_END_HEADERS) === 0) return;
  const block = Buffer.concat(c.blockParts);
  c.blockParts = [];
  c.blockStream = 0;
  headerBlock(c, c.blockFlags, id, block, 0, block.length);
}

/** A complete header block on stream `id`: a new request, or the trailers of an open one. */
function headerBlock(c: H2State, flags: number, id: number, block: Buffer, start: number, end: number): void {
  // Always decode: the HPACK table must follow every block, wanted or not.
  const request = c.request;
  request.begin();
  // The decoder is the one counter of the header list's octets (RequestFields counts fields only).
  const maxList = c.limits.maxHeaderList;
  let fits: boolean;
  try {
    fits = c.decoder.decode(
      block,
      start,
      end,
      request.emit,
      maxList < MAX_HEADER_LIST ? maxList : MAX_HEADER_LIST,
    );
  } catch (err) {
    if (err instanceof HpackError) throw new H2Error(COMPRESSION_ERROR, err.message);
    throw err;
  }
  // HPACK bomb: a block past the header-list bound was only skimmed; such blocks are budgeted.
  if (!fits && !c.refusedBlocks.take())
    throw new H2Error(ENHANCE_YOUR_CALM, "too many header blocks past the header-list bound");
  const ended = (flags & FLAG_END_STREAM) !== 0;
  const open = c.streams.get(id);
  if (open !== undefined) {
    // Trailers: they must end the stream. Their fields mean nothing to a unary call.
    if (open.remoteEnded) reset(c, open, STREAM_CLOSED, "HEADERS after the request's END_STREAM");
    else if (!ended) reset(c, open, PROTOCOL_ERROR, "trailers without END_STREAM");
    else if ((flags & SELF_DEPENDENT) !== 0) reset(c, open, PROTOCOL_ERROR, "stream depends on itself");
    else if (request.trailersProblem() !== "")
      reset(c, open, PROTOCOL_ERROR, `malformed trailers: ${request.trailersProblem()}`);
    else if (open.contentLeft > 0)
      reset(c, open, PROTOCOL_ERROR, "DATA does not add up to the request's content-length");
    else remoteEnd(c, open);
    return;
  }
  if ((id & 1) === 0) throw new H2Error(PROTOCOL_ERROR, `client stream ${id} has an even id`);
  if (id <= c.lastStreamId) {
    notOpen(c, HEADERS, id);
    return;
  }
  c.lastStreamId = id;
  c.history.opened(id);
  if (c.goingAway || c.peerEnded || c.streams.size >= c.limits.maxStreams) {
    resetId(c, id, REFUSED_STREAM);
    c.history.closed(id, "reset-sent");
    return;
  }
  if ((flags & SELF_DEPENDENT) !== 0) {
    c.opts.onError(new H2Error(PROTOCOL_ERROR, `stream ${id} depends on itself`), "stream");
    resetId(c, id, PROTOCOL_ERROR);
    c.history.closed(id, "reset-sent");
    return;
  }
  const s = new H2Stream(id, c.owner, request.fields, c.peerInitialWindow);
  s.openedTick = c.tick;
  c.streams.set(id, s);
  if (!fits) {
    reset(c, s, REFUSED_STREAM);
    return;
  }
  if (request.count > MAX_HEADER_PAIRS) {
    reset(c, s, ENHANCE_YOUR_CALM);
    return;
  }
  const problem = request.requestProblem();
  if (problem !== "") {
    reset(c, s, PROTOCOL_ERROR, `malformed request: ${problem}`);
    return;
  }
  s.contentLeft = request.contentLength;
  if (ended) {
    if (s.contentLeft > 0) {
      reset(c, s, PROTOCOL_ERROR, "END_STREAM before the request's content-length");
      return;
    }
    s.remoteEnded = true;
  }
  c.opts.onStream(s);
  if (ended && !s.isClosed && s.handler !== undefined) c.ready.push(s);
}
