import { Command } from "ioredis";
import { describe, expect, it } from "vitest";
import { compiledPolicy } from "../../../src/config/hot-path.js";
import { calendarWindow } from "../../../src/engine/calendar.js";
import { type EncodableTake, encodeBatchEvalsha, encodeEvalsha } from "../../../src/store/redis/resp.js";
import { encodeBatch } from "../../../src/store/redis/scripts.js";
import type { Take } from "../../../src/store/store.js";

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

describe("encodeBatchEvalsha", () => {
  const take = (
    key: string,
    cost: number,
    limit: number,
    periodMs: number,
    burst: number,
  ): EncodableTake => ({
    key,
    cost,
    policy: { limit, periodMs, burst },
  });
  const same = (calls: EncodableTake[][]) => {
    const args = encodeBatch(calls as unknown as Take[][]);
    const direct = encodeBatchEvalsha(SHA, calls);
    expect(direct.equals(encodeEvalsha(SHA, args)), JSON.stringify(calls)).toBe(true);
    expect(direct.equals(reference(args)), JSON.stringify(calls)).toBe(true);
  };

  it("writes the merged call's arguments as encodeBatch lists them (and ioredis would write them)", () => {
    same([]);
    same([[take("tl:v1:{bench|tenant=hot}:g0", 1, 1_000_000, 60_000, 0)]]);
    same([
      [take("a", 1, 10, 1000, 0), take("tl:v1:{edge|city=Zürich}:g0", 0, 5, 60_000, 2)],
      [take("", 3, 1, 1, 1)],
      [take("emoji 🚦 key", 2, 8571428.5, 86_400_000, 12)],
    ]);
  });

  it("agrees on 300 random batches", () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const alphabet = ["a", "{", "}", "=", "|", "é", "字", "9", ":"];
    const key = () => Array.from({ length: rand(90) }, () => alphabet[rand(alphabet.length)]).join("");
    for (let c = 0; c < 300; c++) {
      const calls = Array.from({ length: rand(70) }, () =>
        Array.from({ length: 1 + rand(4) }, () =>
          take(key(), rand(5), 1 + rand(1 << 30), 1 + rand(1 << 28), rand(3) ? 0 : rand(1 << 20)),
        ),
      );
      same(calls);
    }
  });

  it("writes the same bytes when policy objects are shared across takes and calls, as the config's are", () => {
    // As compiled (config/hot-path.ts): each carries its argument bytes.
    const policies = [
      { limit: 100, periodMs: 1000, burst: 200 },
      { limit: 7, periodMs: 60_000, burst: 0 },
      { limit: 2.5, periodMs: 3_600_000, burst: 12 },
    ].map((p) => compiledPolicy({ algorithm: "gcra", ...p }));
    const calls = Array.from({ length: 50 }, (_, c) =>
      Array.from({ length: 1 + (c % 3) }, (_, i) => ({
        key: `tl:v1:{t${c}}:g${i}`,
        cost: [1, 0, 12, 1.5][(c + i) % 4] ?? 1,
        policy: policies[(c + i) % 3] ?? { limit: 1, periodMs: 1, burst: 1 },
      })),
    );
    same(calls);
    same(calls); // the second time from the same bytes
    // Fresh objects (a spread carries no bytes): written per call.
    same(calls.map((takes) => takes.map((t) => ({ ...t, policy: { ...t.policy } }))));
  });

  it("writes a calendar policy as periodMs 0 and its window text, as encodeBatch lists it", () => {
    const calendar = { unit: "month", timeZone: "Europe/Berlin" } as const;
    const policy = { limit: 1000, periodMs: 30 * 86_400_000, burst: 1000, calendar };
    const calls = [[{ key: "tl:v1:{ai|tenant=a}:g0", cost: 5, policy }], [{ key: "b", cost: 0, policy }]];
    same(calls);
    same(calls); // again, the window's text written per call
    const w = calendarWindow(Date.now(), calendar);
    expect(encodeBatch(calls as unknown as Take[][]).slice(-5)).toEqual([
      0,
      1000,
      0,
      `${w.startMs}:${w.endMs}:${w.nextEndMs}`,
      -1,
    ]);
  });

  it("hands out buffers that later commands do not overwrite", () => {
    const first = encodeBatchEvalsha(SHA, [[take("first-key", 1, 10, 1000, 0)]]);
    const copy = Buffer.from(first);
    for (let i = 0; i < 2000; i++) encodeBatchEvalsha(SHA, [[take(`k${i}`.repeat(20), 1, 10, 1000, 0)]]);
    expect(first.equals(copy)).toBe(true);
  });
});
