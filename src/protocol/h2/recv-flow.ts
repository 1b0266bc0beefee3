/**
 * The receive side of one connection's flow control (RFC 9113 §5.2, §6.9): the window the peer may
 * still send into, and the request bytes the connection holds for its calls. The peer can never send
 * more than the server is willing to hold: a byte a stream keeps (a message not yet complete) is given
 * back to the peer as window only when it is reserved from the process-wide BufferPool, up to the
 * connection's bound; otherwise only once its call consumed it. The first 64 KiB (the protocol's
 * default window, which cannot be taken back) need no reservation, so a connection always makes progress
 * on small messages even when the pool is spent.
 */
import { DEFAULT_WINDOW } from "./frames.js";
import type { BufferPool } from "./limits.js";

export class RecvFlow {
  /** What the peer may still send on the connection before our next WINDOW_UPDATE. */
  window = DEFAULT_WINDOW;
  /** Bytes to give back to the peer (next WINDOW_UPDATE). */
  #credit = 0;
  /** Held bytes reserved from the pool (and already given back as window). */
  #reserved = 0;
  /** Held bytes not reserved: given back as window only when released. */
  #unreserved = 0;

  constructor(
    private readonly pool: BufferPool,
    /** Most bytes the connection holds (its `connectionWindow` limit). */
    private readonly max: number,
  ) {}

  /** Bytes held for calls now. */
  get held(): number {
    return this.#reserved + this.#unreserved;
  }

  /** `n` bytes of DATA arrived; false when they overran the window (FLOW_CONTROL_ERROR). */
  receive(n: number): boolean {
    this.window -= n;
    return this.window >= 0;
  }

  /** `n` received bytes are not kept (padding, a closed stream): the peer gets them back. */
  discard(n: number): void {
    this.#credit += n;
  }

  /** A stream keeps `n` received bytes until its call consumes them. */
  hold(n: number): void {
    const room = Math.max(0, this.max - DEFAULT_WINDOW - this.#reserved);
    const got = this.pool.reserve(Math.min(n, room));
    this.#reserved += got;
    this.#credit += got;
    this.#unreserved += n - got;
  }

  /** `n` held bytes were consumed (or their stream closed). */
  release(n: number): void {
    const fromUnreserved = Math.min(n, this.#unreserved);
    this.#unreserved -= fromUnreserved;
    this.#credit += fromUnreserved;
    const fromReserved = n - fromUnreserved;
    if (fromReserved > 0) {
      this.#reserved -= fromReserved;
      this.pool.release(fromReserved);
    }
  }

  /** The WINDOW_UPDATE increment to send now (0: none yet; sent once half the window is used). */
  update(): number {
    const credit = this.#credit;
    if (credit === 0 || this.window >= DEFAULT_WINDOW / 2) return 0;
    this.#credit = 0;
    this.window += credit;
    return credit;
  }

  /** The connection ended: its reservation goes back to the pool. */
  close(): void {
    this.pool.release(this.#reserved);
    this.#reserved = 0;
    this.#unreserved = 0;
  }
}
