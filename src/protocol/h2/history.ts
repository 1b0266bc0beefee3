/**
 * What a connection remembers of the client streams that are no longer open (RFC 9113 §5.1, §6.4), so a
 * frame on a stream that is not open gets the answer the RFC asks for instead of being dropped:
 *
 * - idle (an id above the highest the client opened, or an even id: we never push): DATA, HEADERS
 *   other than a new stream's, WINDOW_UPDATE and RST_STREAM are a connection PROTOCOL_ERROR;
 * - closed after we sent RST_STREAM: frames the client sent before it saw our reset are ignored
 *   (§5.1 "MUST ignore frames that it receives on closed streams after it has sent a RST_STREAM");
 * - closed after the client's RST_STREAM: DATA or HEADERS is a stream error STREAM_CLOSED;
 * - closed after both END_STREAMs: the client knew it had ended, so DATA or HEADERS is a connection
 *   error STREAM_CLOSED (RFC 7540 §5.1; RFC 9113 leaves it a MAY and h2spec checks it);
 * - never opened (an id the client skipped, below one it opened): HEADERS is a connection
 *   PROTOCOL_ERROR (§5.1.1: an unexpected stream identifier), DATA a connection STREAM_CLOSED;
 * - forgotten (closed too long ago to be in the record): ignored. We cannot know whether we reset it,
 *   and cutting a connection Envoy multiplexes every call on over a late frame costs more than the frame.
 *
 * WINDOW_UPDATE, RST_STREAM and PRIORITY on a closed stream are ignored (they may cross our END_STREAM or
 * RST_STREAM on the wire). The half-closed (local) state, an answer sent while the client is still
 * sending, is an open stream of the connection, not part of this record.
 *
 * The record is a fixed ring indexed by stream id: slot `(id >>> 1) & (size - 1)` holds the last client
 * stream id opened there and its fate. Client ids only grow, so a slot holding a larger id than the one
 * asked about means that one is forgotten, a smaller one (or none) means it was never opened. O(1) per
 * frame, `5 × size` bytes per connection, no allocation after the constructor.
 */
import { type DATA, HEADERS } from "./frames.js";

/** How a stream id stands, as far as the record knows. */
export type StreamFate =
  /** Opened and not recorded as closed (an open stream, or one opened when more than `size` were open). */
  | "open"
  /** We sent RST_STREAM (an error, a refusal, or NO_ERROR to stop an upload we had answered). */
  | "reset-sent"
  /** The client sent RST_STREAM. */
  | "reset-received"
  /** Both sides sent END_STREAM. */
  | "ended"
  /** Never opened: the client skipped this id. */
  | "never-opened"
  /** Closed longer ago than the record reaches. */
  | "forgotten";

/** Fates a stream closes with. */
export type ClosedFate = "reset-sent" | "reset-received" | "ended";

/** What a connection does with a DATA or HEADERS frame on a stream that is neither open nor idle. */
export type ClosedStreamAction =
  | "ignore"
  /** RST_STREAM STREAM_CLOSED on that stream (then it is "reset-sent"). */
  | "reset-stream-closed"
  /** GOAWAY STREAM_CLOSED. */
  | "connection-stream-closed"
  /** GOAWAY PROTOCOL_ERROR. */
  | "connection-protocol-error";

/** Slots of the record by default: the last 1024 client streams opened (5 KiB per connection). */
export const DEFAULT_STREAM_HISTORY = 1024;

const OPEN = 1;
const RESET_SENT = 2;
const RESET_RECEIVED = 3;
const ENDED = 4;
const CODES: Readonly<Record<ClosedFate, number>> = {
  "reset-sent": RESET_SENT,
  "reset-received": RESET_RECEIVED,
  ended: ENDED,
};
const FATES: readonly StreamFate[] = ["never-opened", "open", "reset-sent", "reset-received", "ended"];

/** The bounded record of one connection's client streams. */
export class StreamHistory {
  readonly #ids: Uint32Array;
  readonly #fates: Uint8Array;
  readonly #mask: number;

  /** @param size slots, a power of two ≥ 2 (@default DEFAULT_STREAM_HISTORY) */
  constructor(size: number = DEFAULT_STREAM_HISTORY) {
    if (!Number.isInteger(size) || size < 2 || (size & (size - 1)) !== 0)
      throw new RangeError(`stream history size ${size} is not a power of two ≥ 2`);
    this.#ids = new Uint32Array(size);
    this.#fates = new Uint8Array(size);
    this.#mask = size - 1;
  }

  /** Client stream `id` (odd, larger than any before) was opened. */
  opened(id: number): void {
    const slot = (id >>> 1) & this.#mask;
    this.#ids[slot] = id;
    this.#fates[slot] = OPEN;
  }

  /** Stream `id` closed with `fate` (a no-op when its slot went to a newer stream meanwhile). */
  closed(id: number, fate: ClosedFate): void {
    const slot = (id >>> 1) & this.#mask;
    if (this.#ids[slot] === id) this.#fates[slot] = CODES[fate];
  }

  /** How client stream `id` (odd, not above the highest opened) stands. */
  fate(id: number): StreamFate {
    const slot = (id >>> 1) & this.#mask;
    const held = this.#ids[slot] as number;
    if (held === id) return FATES[this.#fates[slot] as number] as StreamFate;
    return held > id ? "forgotten" : "never-opened";
  }
}

/**
 * The answer to a DATA or HEADERS frame (`type`) on a client stream that is not open and not idle,
 * given its `fate` (RFC 9113 §5.1; see the module comment).
 */
export function closedStreamAction(type: typeof DATA | typeof HEADERS, fate: StreamFate): ClosedStreamAction {
  switch (fate) {
    case "reset-received":
      return "reset-stream-closed";
    case "ended":
      return "connection-stream-closed";
    case "never-opened":
      return type === HEADERS ? "connection-protocol-error" : "connection-stream-closed";
    default:
      // "reset-sent", "forgotten", and "open" (a stream whose slot a newer one took while both were open,
      // closed since): frames possibly sent before our reset reached the client.
      return "ignore";
  }
}
