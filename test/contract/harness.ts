/**
 * What the store contract suite needs from a backend under test.
 */
import type { Store } from "../../src/store/store.js";

/** One backend under test: the store and a way to move its time. */
export interface StoreHarness {
  store: Store;
  /**
   * Let `ms` milliseconds pass for the store: a fake clock moves for the memory store; for Redis
   * (whose scripts use the server's TIME) this really waits.
   */
  advance(ms: number): Promise<void>;
  /**
   * The store's idea of now in epoch ms (the fake clock; for Redis, this machine's clock, which the
   * server's TIME follows). Calendar-window cases use it to know the boundary to expect.
   * @default Date.now
   */
  now?(): number;
  /** Release everything the harness started (clients, servers). */
  close(): Promise<void>;
}

/** Options of the contract suite. */
export interface StoreContractOptions {
  /**
   * The store reads a real clock: a few ms pass between calls, so assertions allow for them and
   * exact-boundary checks (one ms before admission) are skipped.
   * @default false
   */
  realTime?: boolean;
}
