import { Command } from "ioredis";
import { describe, expect, it } from "vitest";
import { encodeEvalsha } from "../../../src/store/redis/resp.js";

const SHA = "0123456789abcdef0123456789abcdef01234567";

/** The bytes ioredis itself writes for the same command. */
const reference = (args: (string | number)[]) =>
  Buffer.from(new Command("evalsha", [SHA, ...args]).toWritable({}) as string, "utf8");

describe("encodeEvalsha", () => {
  it("writes the bytes ioredis writes: keys, numbers, empty and non-ASCII arguments", () => {
    const cases: (string | number)[][] = [
      [],
      [3, "tl:v1:{bench|tenant=hot}:g0", "tl:v1:{bench|ip=10.0.0.1}:g0", "k3", 2, 1, 1, 1],
      [1, "tl:v1:{edge|city=Zürich}:g0", 1, 1_000_000, 60_000, 2_000_000, 8571428.5],
      [1, "", 0, -1, "emoji 🚦 key"],
    ];
    for (const args of cases)
      expect(encodeEvalsha(SHA, args).equals(reference(args)), JSON.stringify(args)).toBe(true);
  });

  it("agrees on 500 random argument lists", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const alphabet = ["a", "{", "}", "=", ",", "|", "é", "字", "0", "%"];
    for (let c = 0; c < 500; c++) {
      const args = Array.from({ length: rand(40) }, () =>
        rand(2)
          ? rand(1 << 30)
          : Array.from({ length: rand(80) }, () => alphabet[rand(alphabet.length)]).join(""),
      );
      expect(encodeEvalsha(SHA, args).equals(reference(args))).toBe(true);
    }
  });
});
