import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../../helpers/redis.js";

describe("test redis helpers", () => {
  let server: RedisServer;
  let cluster: RedisCluster;
  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), cluster?.stop()]);
  });

  it("starts a private server on a port other than 6379 that answers PING", async () => {
    expect(server.port).not.toBe(6379);
    expect(await server.client().ping()).toBe("PONG");
  });

  it("restarts the server empty on the same port", async () => {
    const c = server.client();
    await c.set("k", "v");
    const before = server.pid;
    await server.restart();
    expect(server.pid).not.toBe(before);
    const fresh = server.client();
    expect(await fresh.get("k")).toBeNull();
  });

  it("creates a cluster whose three masters share all 16384 slots", async () => {
    const info = await cluster.nodes[0]?.client().cluster("INFO");
    expect(String(info)).toContain("cluster_slots_assigned:16384");
    expect(cluster.ports).toHaveLength(3);
  });
});
