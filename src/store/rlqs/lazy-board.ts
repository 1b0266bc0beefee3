/**
 * A usage board built on first use: a Redis deployment that serves no RLQS stream opens no extra
 * Redis connection. A board that fails to connect fails its calls like any Redis error (the
 * RLQS failure policy answers), and the next call tries again through the same client.
 */
import type { Participant } from "../../engine/rlqs/allocator.js";
import type { UsageBoard, UsageEntry } from "./board.js";

export class LazyUsageBoard implements UsageBoard {
  readonly kind = "redis";
  #board: UsageBoard | undefined;
  readonly #make: () => UsageBoard;

  constructor(make: () => UsageBoard) {
    this.#make = make;
  }

  #get(): UsageBoard {
    this.#board ??= this.#make();
    return this.#board;
  }

  report(key: string, entry: UsageEntry, staleMs: number): Promise<Participant[]> {
    return this.#get().report(key, entry, staleMs);
  }

  read(key: string, staleMs: number): Promise<Participant[]> {
    return this.#get().read(key, staleMs);
  }

  leave(key: string, participant: string): Promise<void> {
    return this.#board === undefined ? Promise.resolve() : this.#board.leave(key, participant);
  }

  async close(): Promise<void> {
    await this.#board?.close();
  }
}
