/**
 * The bounds one HTTP/2 connection holds a peer to (docs/security.md has the attack each one answers),
 * with defaults Envoy's own traffic never reaches, and the two small accounting helpers they need: a
 * token bucket (burst + rate, as nghttp2 budgets client resets) and the process-wide pool of request
 * bytes the connections may buffer.
 */

/** Bounds of one connection; every field has a default (DEFAULT_LIMITS). */
export interface H2Limits {
  /** Streams open at once (SETTINGS_MAX_CONCURRENT_STREAMS); more are refused (REFUSED_STREAM). */
  readonly maxStreams: number;
  /** Client resets of unanswered streams allowed at once… */
  readonly resetBurst: number;
  /** …and per second after that; past the budget: GOAWAY ENHANCE_YOUR_CALM. */
  readonly resetRate: number;
  /** Header blocks refused for their size (past the header-list bound) allowed at once… */
  readonly refusedBlockBurst: number;
  /** …and per second after that; past the budget: GOAWAY ENHANCE_YOUR_CALM. */
  readonly refusedBlockRate: number;
  /** Largest header list (RFC 9113 §6.5.2 octets) decoded; past it decoding stops, the stream is refused. */
  readonly maxHeaderList: number;
  /** Largest header block (HEADERS + CONTINUATION payload bytes): past it, GOAWAY ENHANCE_YOUR_CALM. */
  readonly maxHeaderBlock: number;
  /** CONTINUATION frames of one header block: past it, GOAWAY ENHANCE_YOUR_CALM. */
  readonly maxContinuations: number;
  /** Entries of one SETTINGS frame: past it, GOAWAY ENHANCE_YOUR_CALM. */
  readonly maxSettingsEntries: number;
  /** PING and SETTINGS acknowledgements queued while the peer does not read: past it, cut. */
  readonly maxQueuedAcks: number;
  /** Answered bytes waiting for the peer's flow-control window: past it, GOAWAY ENHANCE_YOUR_CALM. */
  readonly maxUnsentBytes: number;
  /**
   * Request bytes one connection may have buffered (received, not yet consumed by their call), and the
   * connection receive window announced: the peer can never send more than the server holds.
   */
  readonly connectionWindow: number;
  /** ms for the client preface and first SETTINGS to arrive: past it, the connection is closed. */
  readonly handshakeTimeoutMs: number;
  /** ms for a started header block, and for a request, to finish arriving: past it, cut or reset. */
  readonly requestTimeoutMs: number;
}

/** The defaults; docs/security.md says why Envoy's traffic never reaches them. */
export const DEFAULT_LIMITS: H2Limits = Object.freeze({
  maxStreams: 1000,
  resetBurst: 1000,
  resetRate: 33,
  refusedBlockBurst: 20,
  refusedBlockRate: 2,
  maxHeaderList: 65_536,
  maxHeaderBlock: 81_920,
  maxContinuations: 8,
  maxSettingsEntries: 32,
  maxQueuedAcks: 1000,
  maxUnsentBytes: 1 << 20,
  connectionWindow: 8 << 20,
  handshakeTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
});

/** A token bucket: `burst` tokens, refilled at `rate` per second. */
export class RateBudget {
  #tokens: number;
  #at = 0;
  constructor(
    private readonly burst: number,
    private readonly rate: number,
  ) {
    this.#tokens = burst;
  }

  /** Spend one token; false when the budget is gone. */
  take(): boolean {
    if (this.#tokens < 1) {
      const now = performance.now();
      if (this.#at === 0) this.#at = now;
      this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) * this.rate) / 1000);
      this.#at = now;
      if (this.#tokens < 1) return false;
    } else if (this.#at === 0) this.#at = performance.now();
    this.#tokens--;
    return true;
  }
}

/**
 * The request bytes every connection of a process may hold past its first 64 KiB (the HTTP/2 default
 * window, which cannot be taken back): a connection reserves its window from it when it starts and
 * gives it back when it closes; when it is spent, new connections get the default window only.
 */
export class BufferPool {
  #free: number;
  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Bytes not reserved by any connection. */
  get free(): number {
    return this.#free;
  }

  /** Reserve up to `want` bytes; returns what was granted. */
  reserve(want: number): number {
    const got = Math.max(0, Math.min(want, this.#free));
    this.#free -= got;
    return got;
  }

  release(n: number): void {
    this.#free += n;
  }
}

/** The limits with `overrides` applied (undefined fields keep their default). */
export function limitsWith(overrides: Partial<H2Limits> | undefined): H2Limits {
  if (overrides === undefined) return DEFAULT_LIMITS;
  const out: { -readonly [K in keyof H2Limits]: number } = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof H2Limits)[]) {
    const v = overrides[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}
