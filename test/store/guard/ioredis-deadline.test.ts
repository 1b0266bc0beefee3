/**
 * The deadline against real sockets: ioredis clients pointed at a fake RESP peer that never answers.
 * Real timers here (the point is that no real wait outlives the deadline), with generous bounds.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { GuardedStore } from "../../../src/store/guard/guarded-store.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import type { Outcome, Store, Take } from "../../../src/store/store.js";
import { type FakeResp, startFakeResp } from "../../helpers/fake-resp.js";

const policy: Policy = Object.freeze({ algorithm: "gcra", limit: 5, periodMs: 60_000, burst: 5 });
const takes: Take[] = [{ key: "tl:v1:{t}", policy, cost: 1 }];

/** A store over a raw ioredis client with every default: offline queue on, no command timeout. */
function rawIoredisStore(client: Redis): Store {
  return {
    kind: "raw-ioredis",
    take: async (t) => {
      await client.get(t[0]?.key ?? "");
      return t.map((): Outcome => ({ allowed: true, remaining: 99, retryAfterMs: 0, resetAfterMs: 0 }));
    },
    reset: async () => {},
    ready: async () => {},
    close: async () => client.disconnect(),
  };
}

describe("GuardedStore deadline over ioredis", () => {
  let peer: FakeResp | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    await peer?.close();
  });

  it("answers by policy within the deadline when the peer accepts but never answers", async () => {
    peer = await startFakeResp({ kind: "hang" });
    const client = new Redis({ port: peer.port, host: "127.0.0.1", lazyConnect: false });
    client.on("error", () => {});
    const guard = new GuardedStore({
      inner: rawIoredisStore(client),
      fallback: new MemoryStore({ clock: { now: () => Date.now() } }),
      deadlineMs: 20,
    });
    closers.push(() => guard.close());
    const started = performance.now();
    const answer = await guard.take(takes);
    const elapsed = performance.now() - started;
    expect(answer[0]).toMatchObject({ allowed: true, remaining: 4 });
    expect(elapsed).toBeLessThan(1_000);
    expect(guard.status().lastError?.code).toBe("timeout");
  });

  it("holds the deadline over RedisStore when the peer passes PING but scripts never return", async () => {
    peer = await startFakeResp({ kind: "ping" });
    const inner = new RedisStore({ url: peer.url, commandTimeoutMs: 5_000 });
    await inner.ready();
    const guard = new GuardedStore({
      inner,
      fallback: new MemoryStore({ clock: { now: () => Date.now() } }),
      deadlineMs: 20,
      defaultPolicy: "deny",
      breaker: { consecutiveFailures: 2 },
    });
    closers.push(async () => {
      inner.close().catch(() => {});
    });
    const started = performance.now();
    await guard.take(takes);
    const denied = await guard.take(takes);
    const elapsed = performance.now() - started;
    expect(denied[0]).toMatchObject({ allowed: false });
    expect(denied[0]?.retryAfterMs).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(2_000);
    expect(guard.state).toBe("open");
    expect(peer.commands.filter((c) => c === "EVALSHA" || c === "EVAL").length).toBeGreaterThan(0);
  });
});
