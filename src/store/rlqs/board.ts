/**
 * The RLQS usage board: where every tollgate instance records, per shared bucket, what each Envoy
 * demands and holds, and reads everybody's (docs/rlqs.md, "Aggregation"). One call per bucket per
 * usage report, never per request (plus re-reads while shares move). Backends: in-process (MemoryUsageBoard, one instance) and Redis
 * (RedisUsageBoard, lua/rlqs_usage.lua, shared by every instance); the contract suite
 * (test/contract/rlqs-board-contract.ts) runs both.
 */
import type { Participant } from "../../engine/rlqs/allocator.js";

/** One Envoy's entry for one bucket. */
export interface UsageEntry {
  /** Unique across instances and streams (instance id, stream, BucketId). */
  readonly participant: string;
  /** Requests per second, allowed + denied, over its last reporting interval. */
  readonly demand: number;
  /** Requests per second of the assignment it holds (0 for none). */
  readonly held: number;
}

export interface UsageBoard {
  /** `memory` or `redis`. */
  readonly kind: string;
  /**
   * Record `entry` in the bucket `key` and return every entry of the bucket seen within `staleMs`
   * (the entry itself included), dropping older ones. Atomic per bucket.
   */
  report(key: string, entry: UsageEntry, staleMs: number): Promise<Participant[]>;
  /**
   * Every entry of the bucket `key` seen within `staleMs`, writing nothing of its own (the
   * rebalancer's re-read between reports: engine/rlqs/rebalancer.ts).
   */
  read(key: string, staleMs: number): Promise<Participant[]>;
  /** Remove a participant (its stream ended or the bucket was abandoned). */
  leave(key: string, participant: string): Promise<void>;
  close(): Promise<void>;
}
