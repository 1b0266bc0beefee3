/**
 * The cluster store's merged calls when a node refuses them with CLUSTERDOWN (it ran nothing): resent
 * after short pauses, then the refusal is the answer. Driven through a fake cluster client that
 * answers each EVALSHA as the test says; the real-cluster case is redis-cluster-failover.test.ts.
 */
import type { Cluster } from "ioredis";
import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import type { Batch } from "../../../src/store/redis/batch.js";
import { CLUSTER_DOWN_PAUSES_MS, sendClusterBatches } from "../../../src/store/redis/cluster-batches.js";
import type { EncodedCommand } from "../../../src/store/redis/resp.js";
import { ClusterRunner } from "../../../src/store/redis/script-runner.js";
import { Scripts } from "../../../src/store/redis/scripts.js";

const policy: Policy = { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 10 };
const batch: Batch = { algorithm: "gcra", slot: 7, calls: [[{ key: "tl:v1:{a}:g0", policy, cost: 1 }]] };
/** The batch script's reply for one allowed take: allowed, remaining, retry after, reset after. */
const okReply = [1, 9, 0, 100];

/** A cluster client whose nth EVALSHA gets `answers[n]` (an Error rejects it), and when it was sent. */
function fakeCluster(answers: readonly (unknown[] | Error)[]) {
  const sentAt: number[] = [];
  const cluster = {
    nodes: () => [],
    refreshSlotsCache: () => undefined,
    sendCommand(command: EncodedCommand) {
      const answer = answers[sentAt.length] ?? new Error("no answer scripted");
      sentAt.push(performance.now());
      if (answer instanceof Error) command.reject(answer);
      else command.resolve(answer);
    },
  };
  const scripts = new Scripts(new ClusterRunner(cluster as unknown as Cluster));
  const send = <T>(_slot: number, run: () => Promise<T>) => run();
  return {
    sentAt,
    run: () => sendClusterBatches(cluster as unknown as Cluster, scripts, send, [batch])[0],
  };
}

const clusterDown = () => new Error("CLUSTERDOWN The cluster is down");

describe("merged cluster calls refused with CLUSTERDOWN", () => {
  it("are sent again after a pause and answered once the node serves", async () => {
    const c = fakeCluster([clusterDown(), clusterDown(), okReply]);
    const [outcomes] = (await c.run()) ?? [];
    expect(outcomes).toEqual([{ allowed: true, remaining: 9, retryAfterMs: 0, resetAfterMs: 100 }]);
    expect(c.sentAt).toHaveLength(3);
    // Each resend waits at least its pause (timers never fire early).
    expect((c.sentAt[1] ?? 0) - (c.sentAt[0] ?? 0)).toBeGreaterThanOrEqual(
      (CLUSTER_DOWN_PAUSES_MS[0] ?? 0) - 1,
    );
    expect((c.sentAt[2] ?? 0) - (c.sentAt[1] ?? 0)).toBeGreaterThanOrEqual(
      (CLUSTER_DOWN_PAUSES_MS[1] ?? 0) - 1,
    );
  });

  it("fail with the refusal once every pause is spent (a cluster that stays down fails fast)", async () => {
    const c = fakeCluster(Array.from({ length: 10 }, clusterDown));
    await expect(c.run()).rejects.toThrow(/^CLUSTERDOWN/);
    expect(c.sentAt).toHaveLength(1 + CLUSTER_DOWN_PAUSES_MS.length);
  });

  it("are not resent for other errors, which ran or may have run", async () => {
    const c = fakeCluster([new Error("ERR something else"), okReply]);
    await expect(c.run()).rejects.toThrow("ERR something else");
    expect(c.sentAt).toHaveLength(1);
  });
});
