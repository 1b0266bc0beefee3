import { describe, expect, it } from "vitest";
import type { Algorithm, Policy } from "../../../src/engine/types.js";
import { type Batch, type BatchSender, TakeBatcher } from "../../../src/store/redis/batch.js";
import type { Outcome, Take } from "../../../src/store/store.js";

const gcra: Policy = { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 10 };
const window: Policy = { algorithm: "fixed_window", limit: 10, periodMs: 1000, burst: 10 };
const take = (key: string, policy: Policy = gcra): Take => ({ key, policy, cost: 1 });
/** An outcome that names its key, so answers can be traced back to their call. */
const echo = (t: Take): Outcome => ({
  allowed: true,
  remaining: t.key.length,
  retryAfterMs: 0,
  resetAfterMs: 0,
});
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A sender of one batch at a time (as `answer` says), adapted to the batcher's per-turn sender. */
const each =
  (
    answer: (algorithm: Algorithm, calls: readonly (readonly Take[])[]) => Promise<(Outcome[] | Error)[]>,
  ): BatchSender =>
  (batches) =>
    batches.map((b) => answer(b.algorithm, b.calls));

/** A sender that records every merged call and answers each take with `echo`. */
function recorder() {
  const sent: { algorithm: Algorithm; slot: number; keys: string[][] }[] = [];
  const turns: number[] = [];
  const send: BatchSender = (batches: readonly Batch[]) => {
    turns.push(batches.length);
    return batches.map(async (b) => {
      sent.push({ algorithm: b.algorithm, slot: b.slot, keys: b.calls.map((c) => c.map((t) => t.key)) });
      return b.calls.map((c) => c.map(echo));
    });
  };
  return { sent, send, turns };
}

describe("TakeBatcher", () => {
  it("sends the calls of one turn as one merged call per algorithm, answering each its own outcomes", async () => {
    const { sent, send } = recorder();
    const b = new TakeBatcher(send, 64);
    const answers = Promise.all([
      b.take("gcra", [take("a"), take("bb")]),
      b.take("fixed_window", [take("ccc", window)]),
      b.take("gcra", [take("dddd")]),
    ]);
    expect(sent).toHaveLength(0);
    const [ab, c, d] = await answers;
    expect(sent).toEqual([
      { algorithm: "gcra", slot: -1, keys: [["a", "bb"], ["dddd"]] },
      { algorithm: "fixed_window", slot: -1, keys: [["ccc"]] },
    ]);
    expect(ab?.map((o) => o.remaining)).toEqual([1, 2]);
    expect(c?.map((o) => o.remaining)).toEqual([3]);
    expect(d?.map((o) => o.remaining)).toEqual([4]);
  });

  it("keeps calls of different slots apart, handing the whole turn to the sender at once", async () => {
    const { sent, send, turns } = recorder();
    const b = new TakeBatcher(send, 64);
    await Promise.all([
      b.take("gcra", [take("a")], 7),
      b.take("gcra", [take("b")], 9),
      b.take("gcra", [take("c")], 7),
      b.take("fixed_window", [take("d", window)], 7),
    ]);
    expect(turns).toEqual([3]);
    expect(sent).toEqual([
      { algorithm: "gcra", slot: 7, keys: [["a"], ["c"]] },
      { algorithm: "gcra", slot: 9, keys: [["b"]] },
      { algorithm: "fixed_window", slot: 7, keys: [["d"]] },
    ]);
  });

  it("splits a turn into merged calls of at most maxCalls, in order", async () => {
    const { sent, send } = recorder();
    const b = new TakeBatcher(send, 2);
    const keys = ["a", "b", "c", "d", "e"];
    const answers = await Promise.all(keys.map((k) => b.take("gcra", [take(k.repeat(3))])));
    expect(sent.map((s) => s.keys)).toEqual([[["aaa"], ["bbb"]], [["ccc"], ["ddd"]], [["eee"]]]);
    expect(answers.every((a) => a.length === 1 && a[0]?.remaining === 3)).toBe(true);
  });

  it("starts a new merged call in the next turn", async () => {
    const { sent, send } = recorder();
    const b = new TakeBatcher(send, 64);
    const first = b.take("gcra", [take("a")]);
    await turn();
    const second = b.take("gcra", [take("b")]);
    await Promise.all([first, second]);
    expect(sent.map((s) => s.keys)).toEqual([[["a"]], [["b"]]]);
  });

  it("fails every call of a merged call that fails (rejected or thrown), and only those", async () => {
    let n = 0;
    const b = new TakeBatcher(
      each(async (_algorithm, calls) => {
        n++;
        if (n === 1) throw new Error("connection closed");
        return calls.map((c) => c.map(echo));
      }),
      2,
    );
    const results = await Promise.allSettled(["a", "b", "c"].map((k) => b.take("gcra", [take(k)])));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "fulfilled"]);
    expect((results[0] as PromiseRejectedResult).reason).toEqual(new Error("connection closed"));

    const sync = new TakeBatcher(() => {
      throw new Error("not connected");
    }, 8);
    await expect(sync.take("gcra", [take("a")])).rejects.toThrow("not connected");
  });

  it("rejects every call of a merged reply that answers a different number of calls", async () => {
    const b = new TakeBatcher(
      each(async (_algorithm, calls) => calls.slice(1).map((c) => c.map(echo))),
      8,
    );
    const results = await Promise.allSettled([b.take("gcra", [take("a")]), b.take("gcra", [take("b")])]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe(
      "merged reply answers 1 calls, expected 2",
    );
  });

  it("rejects only the call a merged reply reports failed", async () => {
    const b = new TakeBatcher(
      each(async (_algorithm, calls) =>
        calls.map((c, i) => (i === 1 ? new Error("WRONGTYPE") : c.map(echo))),
      ),
      8,
    );
    const results = await Promise.allSettled(["a", "b", "c"].map((k) => b.take("gcra", [take(k)])));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("WRONGTYPE");
  });

  it("refuses a batch size below 1", () => {
    expect(() => new TakeBatcher(() => [], 0)).toThrow(RangeError);
  });
});
