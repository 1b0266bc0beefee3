/**
 * The tenant override change goes through the script runner like every script (lua/tenant_tier_change.lua,
 * EVALSHA by its SHA1, NOSCRIPT recovered in the runner): a change still works after SCRIPT FLUSH, on
 * one redis-server and on a 3-master cluster, and the script the server holds is the file's.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantTiersKey } from "../../../src/engine/keys.js";
import { keySlot } from "../../../src/store/redis/slot.js";
import { createTenantOverrides } from "../../../src/store/tenants/create.js";
import type { OverrideTable } from "../../../src/store/tenants/overrides.js";
import {
  clusterNodes,
  type RedisCluster,
  type RedisServer,
  startCluster,
  startRedis,
} from "../../helpers/redis.js";

const LUA = readFileSync(new URL("../../../lua/tenant_tier_change.lua", import.meta.url), "utf8");
const SHA = createHash("sha1").update(LUA).digest("hex");

/** Calls of `command` in the node's INFO commandstats (0 when it never ran). */
async function calls(node: Redis, command: string): Promise<number> {
  const m = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(await node.info("commandstats"));
  return Number(m?.[1] ?? 0);
}

/** Wait (bounded) until `tables` holds a snapshot where `tenant` has `tier` (undefined: none). */
async function seen(tables: OverrideTable[], tenant: string, tier: string | undefined): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (tables.at(-1)?.get(tenant) !== tier) {
    if (Date.now() > deadline) throw new Error(`${tenant} → ${tier} was never applied`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A server under test: its URL, and one client per master with the port it listens on. */
interface Target {
  readonly url: string;
  readonly nodes: readonly { readonly port: number; readonly client: Redis }[];
}

/** The client of the node serving `key` (the one node, or the cluster master owning its slot). */
async function holderOf(target: Target, key: string): Promise<Redis> {
  const [only] = target.nodes;
  if (target.nodes.length === 1 && only) return only.client;
  const slot = keySlot(key);
  const owner = (await clusterNodes(target.nodes[0]?.port ?? 0)).find((n) =>
    n.slots.some(([first, last]) => slot >= first && slot <= last),
  );
  const node = target.nodes.find((n) => n.port === owner?.port);
  if (!node) throw new Error(`no master serves slot ${slot}`);
  return node.client;
}

describe("tenant override changes through the script runner", () => {
  let redis: RedisServer;
  let cluster: RedisCluster;
  const targets = new Map<string, Target>();
  beforeAll(async () => {
    [redis, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
    targets.set("one redis-server", {
      url: redis.url,
      nodes: [{ port: redis.port, client: redis.client() }],
    });
    targets.set("a 3-master cluster", {
      url: cluster.url,
      nodes: cluster.nodes.map((n) => ({ port: n.port, client: n.client() })),
    });
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), cluster?.stop()]);
  });

  it.each([
    ["one redis-server"],
    ["a 3-master cluster"],
  ])("changes a tier after SCRIPT FLUSH on %s, by EVALSHA of lua/tenant_tier_change.lua", async (name) => {
    const target = targets.get(name) as Target;
    const clients = target.nodes.map((n) => n.client);
    const prefix = "flush:";
    const store = createTenantOverrides(
      { store: target.url, keyPrefix: prefix, redisTlsCaFile: "" },
      () => {},
    );
    const tables: OverrideTable[] = [];
    try {
      await store.open((t) => tables.push(t));
      expect(await store.set("acme", "gold")).toBeUndefined();
      await seen(tables, "acme", "gold");

      await Promise.all(clients.map((c) => c.script("FLUSH")));
      await Promise.all(clients.map((c) => c.config("RESETSTAT")));
      expect(await store.set("acme", "silver")).toBe("gold");
      await seen(tables, "acme", "silver");
      expect(await store.delete("acme")).toBe("silver");
      await seen(tables, "acme", undefined);
      expect(await store.delete("acme")).toBeUndefined();

      // The node of the hash's slot ran the file's script by its SHA1: NOSCRIPT once, then EVAL
      // once (the runner's recovery, which loads it), then EVALSHA for the calls after.
      const holder = await holderOf(target, tenantTiersKey(prefix));
      expect(await holder.script("EXISTS", SHA)).toEqual([1]);
      expect(await calls(holder, "eval")).toBe(1);
      expect(await calls(holder, "evalsha")).toBeGreaterThanOrEqual(2);
    } finally {
      await store.close();
    }
  }, 20_000);
});
