import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { StoreError } from "../../../src/store/store.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const policy: Policy = { algorithm: "gcra", limit: 5, periodMs: 60_000, burst: 5 };

describe("Redis ACL user and password", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    // A least-privilege user: the commands tollgate needs, on tollgate's keys only.
    await admin.call(
      "ACL",
      "SETUSER",
      "tollgate",
      "on",
      ">s3cret-pw",
      "~tl:v1:*",
      "resetchannels",
      "-@all",
      "+evalsha",
      "+eval",
      "+script|load",
      "+ping",
      "+del",
      "+info",
      "+cluster|slots",
      // what the scripts call (a script runs with its caller's permissions)
      "+time",
      "+get",
      "+set",
      "+incrby",
      "+decrby",
      "+pttl",
      "+pexpireat",
    );
    await admin.call("ACL", "SETUSER", "default", "off");
    admin.disconnect();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves with the right user and password, limited to tollgate's keys", async () => {
    const store = new RedisStore({ url: `redis://tollgate:s3cret-pw@127.0.0.1:${server.port}` });
    try {
      await store.ready();
      const [o] = await store.take([{ key: "tl:v1:{acl|u=1}:g0", policy, cost: 1 }]);
      expect(o).toMatchObject({ allowed: true, remaining: 4 });
    } finally {
      await store.close();
    }
  });

  it("fails ready() with a non-transient auth error for a wrong password, never showing it", async () => {
    const store = new RedisStore({
      url: `redis://tollgate:wrong-pw@127.0.0.1:${server.port}`,
      readyTimeoutMs: 2000,
    });
    try {
      expect(store.redactedUrl).not.toContain("wrong-pw");
      const err = await store.ready().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe("auth");
      expect((err as StoreError).transient).toBe(false);
      expect((err as StoreError).message).not.toContain("wrong-pw");
    } finally {
      await store.close();
    }
  });
});
