import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot, slotOfUtf8 } from "../../../src/store/redis/slot.js";
import { Prng } from "../../fuzz/prng.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const ALPHABET = ["a", "Z", "0", ":", "{", "}", "_", "é", "€", "😀", "-", "{}", "|", "="];

// Redis itself is the reference: a cluster-enabled redis-server answers CLUSTER KEYSLOT without any
// slots assigned. (cluster-key-slot, which ioredis uses, differs on keys whose first {} is empty:
// "foo{}{bar}" is slot 8363 for Redis, 4015 for it.)
let server: RedisServer;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-slot-"));
  server = await startRedis({
    args: ["--cluster-enabled", "yes", "--cluster-config-file", join(dir, "nodes.conf")],
  });
});
afterAll(async () => {
  await server?.stop();
});

describe("keySlot", () => {
  it("gives the slots Redis gives, hash tags and their edge cases included", async () => {
    const redis = server.client();
    const keys = [
      "123456789",
      "{user1000}.following",
      "{user1000}.followers",
      "user1000",
      "foo{}{bar}",
      "foo{{bar}}zap",
      "foo{bar}{zap}",
      "{",
      "}",
      "{}",
      "",
      "tl:v1:{edge|tenant=acme|route_class=read}:g0",
    ];
    const rand = new Prng(42);
    for (let n = 0; n < 2000; n++) {
      const length = rand.int(0, 23);
      let key = "";
      for (let i = 0; i < length; i++) key += rand.pick(ALPHABET);
      keys.push(key);
    }
    const expected = await Promise.all(
      keys.map((k) => redis.call("CLUSTER", "KEYSLOT", k) as Promise<number>),
    );
    keys.forEach((key, i) => {
      expect(keySlot(key), JSON.stringify(key)).toBe(expected[i]);
      expect(slotOfUtf8(key), JSON.stringify(key)).toBe(expected[i]);
    });
    expect(keySlot("123456789")).toBe(0x31c3); // CRC16/XMODEM check value
  });
});
