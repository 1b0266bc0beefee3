/**
 * A master, its replica and one sentinel (quorum 1) behind a `redis-sentinel://` store serving a
 * steady stream of takes: first a planned `SENTINEL FAILOVER`, then the new master is SIGKILLed and
 * the sentinel promotes the old one back. Real time is measured on purpose: the bounds are the
 * behaviour under test; the measured figures are recorded in docs/redis.md ("Failover").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import {
  execFileAsync,
  keysWithoutTtl,
  outage,
  type RedisServer,
  startRedis,
  steadyCalls,
} from "../../helpers/redis.js";
import { type RedisSentinel, startSentinel } from "../../helpers/redis-sentinel.js";

const roomy: Policy = { algorithm: "gcra", limit: 1_000_000, periodMs: 3_600_000, burst: 1_000_000 };
/** One token back per 6 minutes: nothing refills during the test. */
const state: Policy = { algorithm: "gcra", limit: 10, periodMs: 3_600_000, burst: 10 };
const NAME = "mymaster";
const STATE_KEY = "tl:v1:{state}:g0";
const AFTER_KEY = "tl:v1:{after}:g0";
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Planned: the store may fail calls only within this window after `SENTINEL FAILOVER`. */
const PLANNED_BOUND_MS = 4_000;
/** Unplanned: down-after (1 s) + election and promotion + the client's reconnect back-off. */
const UNPLANNED_BOUND_MS = 6_000;

async function sentinelMasterPort(sentinel: RedisSentinel): Promise<number> {
  const { stdout } = await execFileAsync(
    "redis-cli",
    ["-p", String(sentinel.port), "SENTINEL", "get-master-addr-by-name", NAME],
    { timeout: 1000 },
  );
  return Number(stdout.trim().split("\n")[1]);
}

/** Wait until the sentinel names `port` as master and `port` itself says so. */
async function waitMaster(sentinel: RedisSentinel, node: RedisServer, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const named = await sentinelMasterPort(sentinel).catch(() => -1);
    const info = named === node.port ? await node.client().info("replication") : "";
    if (info.includes("role:master")) return;
    await delay(20);
  }
  throw new Error(`the sentinel did not promote ${node.port} within ${timeoutMs} ms`);
}

/** Wait until `replica` is synced and the sentinel knows it as a healthy replica. */
async function waitReplica(sentinel: RedisSentinel, replica: RedisServer): Promise<void> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const info = await replica.client().info("replication");
    const { stdout } = await execFileAsync(
      "redis-cli",
      ["-p", String(sentinel.port), "SENTINEL", "replicas", NAME],
      { timeout: 1000 },
    );
    const lines = stdout.split("\n");
    const known = lines.includes(String(replica.port));
    const flags = lines[lines.indexOf("flags") + 1] ?? "";
    if (info.includes("master_link_status:up") && known && flags === "slave") return;
    await delay(100);
  }
  throw new Error(`replica ${replica.port} not synced or not known to the sentinel`);
}

describe("RedisStore through Sentinel while the master fails over", () => {
  let a: RedisServer;
  let b: RedisServer;
  let sentinel: RedisSentinel;
  let store: RedisStore;
  beforeAll(async () => {
    // A full sync otherwise waits 5 s (repl-diskless-sync-delay) for more replicas to join it.
    const fast = ["--repl-diskless-sync-delay", "0"];
    a = await startRedis({ args: fast });
    b = await startRedis({ args: [...fast, "--replicaof", "127.0.0.1", String(a.port)] });
    sentinel = await startSentinel({ masterPort: a.port, masterName: NAME, downAfterMs: 1000 });
    await waitReplica(sentinel, b);
    store = new RedisStore({ url: sentinel.url, commandTimeoutMs: 100, callTimeoutMs: 400 });
    await store.ready();
  }, 30_000);
  afterAll(async () => {
    await store?.close();
    await sentinel?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const stream = () =>
    steadyCalls({
      calls: { take: () => store.take([{ key: "tl:v1:{stream}:g0", policy: roomy, cost: 1 }]) },
      gapMs: 5,
      maxMs: 15_000,
    });

  it("follows a planned SENTINEL FAILOVER to the replica with the buckets' state kept", async () => {
    await store.take([{ key: STATE_KEY, policy: state, cost: 4 }]);
    expect(await a.client().call("WAIT", 1, 1000)).toBe(1);
    const calls = stream();
    await delay(300);
    const since = performance.now();
    await execFileAsync("redis-cli", ["-p", String(sentinel.port), "SENTINEL", "FAILOVER", NAME], {
      timeout: 1000,
    });
    await waitMaster(sentinel, b, PLANNED_BOUND_MS);
    const promotedAfterMs = performance.now() - since;
    await delay(1_500);
    const o = outage(await calls.stop(), "take", since);
    console.info(
      `sentinel planned failover: promoted after ${promotedAfterMs.toFixed(0)} ms; ${o.failures}/${o.calls} ` +
        `calls failed; serving again ${o.recoveredAfterMs.toFixed(0)} ms after SENTINEL FAILOVER`,
    );
    expect(o.servingAtEnd).toBe(true);
    expect(o.recoveredAfterMs).toBeLessThan(PLANNED_BOUND_MS);
    const [peek] = await store.take([{ key: STATE_KEY, policy: state, cost: 0 }]);
    expect(peek).toMatchObject({ allowed: true, remaining: 6 });
    // The write lands on the new master, not on the old one (which the sentinel demotes only later).
    await store.take([{ key: AFTER_KEY, policy: state, cost: 1 }]);
    expect(Number(await b.client().get(AFTER_KEY))).toBeGreaterThan(0);
  });

  it("follows the sentinel to the old master when the new one is SIGKILLed", async () => {
    await waitReplica(sentinel, a); // the sentinel turned the old master into b's replica
    await store.take([{ key: STATE_KEY, policy: state, cost: 1 }]);
    expect(await b.client().call("WAIT", 1, 1000)).toBe(1);
    const calls = stream();
    await delay(300);
    const since = performance.now();
    await b.kill("SIGKILL");
    await waitMaster(sentinel, a, UNPLANNED_BOUND_MS);
    const promotedAfterMs = performance.now() - since;
    await delay(1_500);
    const o = outage(await calls.stop(), "take", since);
    console.info(
      `sentinel unplanned failover (SIGKILL): promoted after ${promotedAfterMs.toFixed(0)} ms; ` +
        `${o.failures}/${o.calls} calls failed; serving again ${o.recoveredAfterMs.toFixed(0)} ms after the kill`,
    );
    expect(o.failures).toBeGreaterThan(0); // the master really was gone for a while
    expect(o.servingAtEnd).toBe(true);
    expect(o.recoveredAfterMs).toBeLessThan(UNPLANNED_BOUND_MS);
    const [peek] = await store.take([{ key: STATE_KEY, policy: state, cost: 0 }]);
    expect(peek).toMatchObject({ allowed: true, remaining: 5 });
    expect(await keysWithoutTtl(a.client())).toEqual([]);
  });
});
