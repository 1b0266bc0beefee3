import { describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { groupKeysBySlot, groupTakes } from "../../../src/store/redis/groups.js";

const gcra: Policy = { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 10 };
const fw: Policy = { algorithm: "fixed_window", limit: 10, periodMs: 1000, burst: 10 };

describe("groupTakes", () => {
  it("keeps one group per algorithm on a single node, with request positions", () => {
    const groups = groupTakes(
      [
        { key: "{a}1", policy: gcra, cost: 1 },
        { key: "{b}1", policy: fw, cost: 1 },
        { key: "{c}1", policy: gcra, cost: 1 },
      ],
      { bySlot: false },
    );
    expect(groups.map((g) => [g.slot, g.algorithm, g.indexes])).toEqual([
      [-1, "gcra", [0, 2]],
      [-1, "fixed_window", [1]],
    ]);
  });

  it("splits keys of different hash tags into slot groups in a cluster", () => {
    const groups = groupTakes(
      [
        { key: "tl:v1:{user1000}:a", policy: gcra, cost: 1 },
        { key: "tl:v1:{somekey}:a", policy: gcra, cost: 1 },
        { key: "tl:v1:{user1000}:b", policy: gcra, cost: 1 },
      ],
      { bySlot: true },
    );
    expect(groups.map((g) => g.indexes)).toEqual([[0, 2], [1]]);
    // The slots the Redis docs give for CLUSTER KEYSLOT {user1000}.following and somekey.
    expect(groups.map((g) => g.slot)).toEqual([3443, 11058]);
  });

  it("groups a large call (past the linear scan) the same way, in first-seen order", () => {
    const takes = Array.from({ length: 40 }, (_, i) => ({
      key: `tl:v1:{t${i % 5}}:g${i}`,
      policy: i % 2 === 0 ? gcra : fw,
      cost: 1,
    }));
    const big = groupTakes(takes, { bySlot: true });
    // Any 10 consecutive takes cover all 10 (tag, algorithm) pairs: the same groups in small calls.
    const small = groupTakes(takes.slice(0, 10), { bySlot: true });
    expect(big.map((g) => [g.slot, g.algorithm])).toEqual(small.map((g) => [g.slot, g.algorithm]));
    expect(big).toHaveLength(10);
    for (const g of big) {
      expect(g.indexes).toHaveLength(4);
      g.indexes.forEach((index, i) => {
        expect(takes[index]).toBe(g.takes[i]);
        expect(index % 10).toBe((g.indexes[0] ?? 0) % 10);
      });
    }
  });
});

describe("groupKeysBySlot", () => {
  it("puts all keys in one group without slots and none for no keys", () => {
    expect(groupKeysBySlot(["a", "b"], { bySlot: false })).toEqual([{ slot: -1, keys: ["a", "b"] }]);
    expect(groupKeysBySlot([], { bySlot: false })).toEqual([]);
  });

  it("groups keys sharing a hash tag", () => {
    const groups = groupKeysBySlot(["{x}1", "{y}1", "{x}2"], { bySlot: true });
    expect(groups.map((g) => g.keys)).toEqual([["{x}1", "{x}2"], ["{y}1"]]);
  });
});
