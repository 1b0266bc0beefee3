/**
 * Count Redis round trips the way auto-pipelining makes them: every command sent to one node within
 * one event-loop turn (until the next setImmediate) leaves in the same write and comes back together,
 * so it is one round trip no matter how many concurrent requests contributed. Requests ÷ round trips
 * is the sharing factor the benchmark reports. Without auto-pipelining every command is its own
 * round trip.
 */
import type { EngineMetrics } from "../../engine/metrics-port.js";

/** Reports round trips to `metrics.storeRoundTrips`, deduplicated per node per tick. */
export class RoundTripMeter {
  readonly #metrics: EngineMetrics;
  readonly #pipelined: boolean;
  #tick = new Set<string>();
  #scheduled = false;
  #total = 0;

  constructor(metrics: EngineMetrics, options: { pipelined: boolean }) {
    this.#metrics = metrics;
    this.#pipelined = options.pipelined;
  }

  /** Round trips counted so far (for tests and benchmarks). */
  get total(): number {
    return this.#total;
  }

  /**
   * A command is about to be sent to `node` (any stable node id; `""` for a single node).
   * `sharedWrite`: it leaves in one write with the node's other commands of this turn (auto-pipelining,
   * or the cluster store's corked turn).
   */
  note(node: string, sharedWrite = this.#pipelined): void {
    if (sharedWrite) {
      if (this.#tick.has(node)) return;
      this.#tick.add(node);
      if (!this.#scheduled) {
        this.#scheduled = true;
        // ioredis 5.6 flushes its auto-pipeline on setImmediate (autoPipelining.js), so commands of
        // several ticks share one write: reset our window at the same point. (It also holds a node's
        // next pipeline while one is in flight, so this is an upper bound.)
        setImmediate(() => {
          this.#tick = new Set();
          this.#scheduled = false;
        });
      }
    }
    this.#total += 1;
    this.#metrics.storeRoundTrips(1);
  }
}
