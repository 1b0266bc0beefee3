import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/store/redis/slot.js";
import { type Answer, type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const TENANT_CAP = 30;
const ROUTE_CAP = 1000;
const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: hour, requests_per_unit: ${TENANT_CAP} }
  - key: route
    rate_limit: { unit: hour, requests_per_unit: ${ROUTE_CAP} }
`;
/**
 * Exactness needs every decision made by the store: a generous deadline and `deny` on store errors,
 * so a starved machine can only under-admit (a missed deadline is denied, never decided locally).
 */
const ARGS = ["--store-deadline", "2s", "--redis-command-timeout", "2s", "--on-store-error", "deny"];

function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-multi-"));
  writeFileSync(join(dir, "edge.yaml"), CONFIG);
  return dir;
}

/** Start `n` tollgate processes on one store and a client to each. */
async function fleet(store: string, n: number): Promise<{ services: Service[]; clients: RlsClient[] }> {
  const config = configDir();
  const services = await Promise.all(
    Array.from({ length: n }, () => startService({ config, store, args: ARGS })),
  );
  return { services, clients: services.map((s) => rlsClient(s.grpcPort)) };
}

/** `total` concurrent calls of `descriptors`, spread round-robin over the clients. */
function burst(
  clients: readonly RlsClient[],
  total: number,
  descriptors: [string, string][][],
): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: total }, (_, i) =>
      clients[i % clients.length]?.call("edge", descriptors, { deadlineMs: 10_000 }),
    ),
  ).then((as) => as.filter((a): a is Answer => a !== undefined));
}

const admitted = (as: readonly Answer[]) => as.filter((a) => a.grpcStatus === 0 && a.code === "OK").length;

async function stopAll(f: { services: Service[]; clients: RlsClient[] } | undefined): Promise<void> {
  for (const c of f?.clients ?? []) c.close();
  await Promise.all((f?.services ?? []).map((s) => s.stop()));
}

describe("three tollgate processes sharing one redis-server", () => {
  let redis: RedisServer;
  let f: { services: Service[]; clients: RlsClient[] } | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    f = await fleet(redis.url, 3);
  });
  afterAll(async () => {
    await stopAll(f);
    await redis?.stop();
  });

  it("admit exactly one bucket's capacity out of 300 concurrent requests, never more", async () => {
    const answers = await burst(f?.clients ?? [], 300, [[["tenant", "shared"]]]);
    expect(answers).toHaveLength(300);
    expect(answers.filter((a) => a.grpcStatus !== 0)).toEqual([]);
    expect(admitted(answers)).toBe(TENANT_CAP);
    // Every process saw the shared state: each one now denies.
    for (const c of f?.clients ?? [])
      expect((await c.call("edge", [[["tenant", "shared"]]])).code).toBe("OVER_LIMIT");
  });
});

describe("three tollgate processes sharing a 3-master Redis Cluster", () => {
  let cluster: RedisCluster;
  let f: { services: Service[]; clients: RlsClient[] } | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
    f = await fleet(cluster.url, 3);
  });
  afterAll(async () => {
    await stopAll(f);
    await cluster?.stop();
  });

  it("admit exactly the tighter bucket's capacity for requests whose descriptors live on different masters", async () => {
    const tenantSlot = keySlot("tl:v1:{edge|tenant=acme}:g0");
    const routeSlot = keySlot("tl:v1:{edge|route=checkout}:g0");
    const slots = (await cluster.nodes[0]?.client().call("CLUSTER", "SLOTS")) as [
      number,
      number,
      [string, number],
    ][];
    const owner = (slot: number) => slots.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    expect(owner(tenantSlot)).toBeDefined();
    expect(owner(tenantSlot)).not.toBe(owner(routeSlot));

    const both: [string, string][][] = [[["tenant", "acme"]], [["route", "checkout"]]];
    const answers = await burst(f?.clients ?? [], 300, both);
    expect(answers.filter((a) => a.grpcStatus !== 0)).toEqual([]);
    expect(admitted(answers)).toBe(TENANT_CAP);
    // Denied requests charged nothing on the other master: the route bucket paid for the admitted ones only.
    const probe = await f?.clients[1]?.call("edge", [[["route", "checkout"]]]);
    expect(probe?.remaining).toEqual([ROUTE_CAP - TENANT_CAP - 1]);
  });
});
