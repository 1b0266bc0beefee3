/**
 * The in-process usage board: the executable specification of lua/rlqs_usage.lua, on an injected
 * clock. Buckets with no live entry are dropped when next touched or swept.
 */
import type { Participant } from "../../engine/rlqs/allocator.js";
import type { Clock } from "../../engine/types.js";
import type { UsageBoard, UsageEntry } from "./board.js";

interface Stamped {
  readonly demand: number;
  readonly held: number;
  readonly at: number;
}

/** See the module comment. */
export class MemoryUsageBoard implements UsageBoard {
  readonly kind = "memory";
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Map<string, Stamped>>();

  constructor(opts: { readonly clock: Clock }) {
    this.#clock = opts.clock;
  }

  /** Synchronous form of {@link report} and {@link read} (one Node process: atomic). */
  reportNow(key: string, entry: UsageEntry | undefined, staleMs: number): Participant[] {
    const now = Math.floor(this.#clock.now());
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (entry === undefined) return [];
      bucket = new Map();
      this.#buckets.set(key, bucket);
    }
    if (entry !== undefined)
      bucket.set(entry.participant, { demand: entry.demand, held: entry.held, at: now });
    const out: Participant[] = [];
    for (const [id, s] of bucket) {
      if (now - s.at > staleMs) bucket.delete(id);
      else out.push({ id, demand: s.demand, held: s.held });
    }
    return out;
  }

  async report(key: string, entry: UsageEntry, staleMs: number): Promise<Participant[]> {
    return this.reportNow(key, entry, staleMs);
  }

  async read(key: string, staleMs: number): Promise<Participant[]> {
    return this.reportNow(key, undefined, staleMs);
  }

  async leave(key: string, participant: string): Promise<void> {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return;
    bucket.delete(participant);
    if (bucket.size === 0) this.#buckets.delete(key);
  }

  /** Buckets held (for tests). */
  size(): number {
    return this.#buckets.size;
  }

  async close(): Promise<void> {
    this.#buckets.clear();
  }
}
