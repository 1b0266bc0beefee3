/** RlqsSession on a fake clock and in-process boards: re-sends, TTL refresh, failure policies. */
import { describe, expect, it } from "vitest";
import { targetShares } from "../../../src/engine/rlqs/allocator.js";
import type { RlqsAction, RlqsConfigView } from "../../../src/engine/rlqs/messages.js";
import { RlqsSession } from "../../../src/engine/rlqs/session.js";
import { MAX_REREADS } from "../../../src/engine/rlqs/share.js";
import type { FailurePolicy } from "../../../src/engine/types.js";
import type { UsageBoard } from "../../../src/store/rlqs/board.js";
import { MemoryUsageBoard } from "../../../src/store/rlqs/memory-board.js";
import { StoreError } from "../../../src/store/store.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { rlqsView } from "../../helpers/rlqs-config.js";

function view(policy?: FailurePolicy): RlqsConfigView {
  const yaml = `domain: edge
${policy ? `on_store_error: ${policy}\n` : ""}rlqs:
  keys: [{ key: tenant }]
  assignment_ttl: 4s
  reporting_interval: 1s
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 100 }
`;
  return rlqsView(yaml);
}

const failing: UsageBoard = {
  kind: "redis",
  report: async () => {
    throw new StoreError("down", { code: "rlqs_usage", transient: true });
  },
  read: async () => {
    throw new StoreError("down", { code: "rlqs_usage", transient: true });
  },
  leave: async () => {},
  close: async () => {},
};

function session(opts: { policy?: FailurePolicy; board?: UsageBoard; instances?: number } = {}) {
  const clock = new FakeClock();
  const local = new MemoryUsageBoard({ clock });
  const s = new RlqsSession({
    config: () => view(opts.policy),
    board: opts.board ?? new MemoryUsageBoard({ clock }),
    localBoard: local,
    instances: () => opts.instances ?? 1,
    clock,
    participant: "i/1",
    defaultPolicy: "local",
    keyPrefix: "",
  });
  return { s, clock };
}

const report = (n: number, domain = "edge") => ({
  domain,
  usages: [{ bucket: new Map([["tenant", "acme"]]), elapsedMs: 0, allowed: n, denied: 0 }],
});

/** A session of participant `participant` on a board shared with others. */
const onBoard = (board: UsageBoard, clock: FakeClock, participant: string) =>
  new RlqsSession({
    config: () => view(),
    board,
    localBoard: new MemoryUsageBoard({ clock }),
    instances: () => 1,
    clock,
    participant,
    defaultPolicy: "local",
    keyPrefix: "",
  });

/** The token bucket rate of the first assignment of `actions` (-1: none). */
const rate = (actions: RlqsAction[]) => {
  const s = actions[0]?.kind === "assign" ? actions[0].strategy : undefined;
  return s !== undefined && "tokenBucket" in s
    ? s.tokenBucket.tokensPerFill / s.tokenBucket.fillIntervalSec
    : -1;
};

const KEY = "tl:v1:{edge|tenant=acme}:q";

describe("RlqsSession", () => {
  it("assigns at once, stays quiet while nothing changes, and re-sends at half the TTL", async () => {
    const { s, clock } = session();
    const first = await s.report(report(1));
    expect(first).toEqual([
      {
        kind: "assign",
        bucket: new Map([["tenant", "acme"]]),
        ttlMs: 4000,
        strategy: { tokenBucket: { maxTokens: 100, tokensPerFill: 1000, fillIntervalSec: 10 } },
      },
    ]);
    clock.advance(1000);
    expect(await s.report(report(50))).toEqual([]);
    clock.advance(1000);
    expect(await s.report(report(50))).toHaveLength(1); // 2 s = half the TTL: refreshed
  });

  it("answers with the domain's failure policy when the shared board fails", async () => {
    const strategy = async (policy: FailurePolicy, instances = 1) => {
      const { s } = session({ policy, board: failing, instances });
      const actions = await s.report(report(1));
      return actions[0]?.kind === "assign" ? actions[0].strategy : undefined;
    };
    expect(await strategy("allow")).toEqual({ blanket: "ALLOW_ALL" });
    expect(await strategy("deny")).toEqual({ blanket: "DENY_ALL" });
    expect(await strategy("error")).toBeUndefined();
    // local: this instance's share of the limit (100 / 4 instances), from its own Envoys only.
    expect(await strategy("local", 4)).toEqual({
      tokenBucket: { maxTokens: 25, tokensPerFill: 1000, fillIntervalSec: 40 },
    });
  });

  it("raises a capped share between reports once another Envoy publishes the room it freed", async () => {
    const clock = new FakeClock();
    const board = new MemoryUsageBoard({ clock });
    const a = onBoard(board, clock, "i1/1");
    const b = onBoard(board, clock, "i2/1");
    expect(rate(await a.report(report(90)))).toBe(100); // alone: the whole limit
    expect(a.unsettled).toBe(false);
    // b's fair share is 50, but a holds all 100: b gets the one-token minimum and waits.
    expect(rate(await b.report(report(90)))).toBe(0.1);
    expect(b.unsettled).toBe(true);
    expect(await b.rebalance(new Map())).toEqual([]); // no room yet
    clock.advance(1000);
    // a's next report sees b waiting: a drops to its share and publishes it at once.
    expect(rate(await a.report(report(90)))).toBe(50);
    // b's re-read finds the room before b's own next report.
    expect(rate(await b.rebalance(new Map()))).toBe(50);
    expect(b.unsettled).toBe(true); // raised: it keeps looking until its next report (MAX_REREADS)
    expect((await board.read(KEY, 3000)).map((p) => p.held)).toEqual([50, 50]);
  });

  it("lowers a share raised on a half-seen flip by a re-read, before its own next report", async () => {
    // 60/20/20 % of demand flips to 20/20/60: a's shrink and c's steady report land before b's
    // report, c's growth after it. b's target rose in its half-seen view (nobody short there, its
    // own demand unchanged); c's growth then lowers it, and c waits for the room b holds.
    const clock = new FakeClock();
    const board = new MemoryUsageBoard({ clock });
    const [a, b, c] = ["i1/1", "i1/2", "i2/1"].map((p) => onBoard(board, clock, p)) as [
      RlqsSession,
      RlqsSession,
      RlqsSession,
    ];
    const held = async () => (await board.read(KEY, 3000)).map((p) => p.held);
    for (let round = 0; round < 3; round++) {
      for (const [s, n] of [
        [a, 60],
        [b, 20],
        [c, 20],
      ] as const)
        await s.report(report(n));
      clock.advance(1000);
    }
    const [before, after] = [targetShares(100, 0.1, [60, 20, 20]), targetShares(100, 0.1, [20, 20, 60])];
    const near = (x: number, target: number) => Math.abs(x - target) < 0.2; // token rounding
    expect((await held()).every((h, i) => near(h, before[i] as number))).toBe(true);
    await a.report(report(20)); // shrinks
    await c.report(report(20)); // steady: raised to the half-seen 1/3
    const raised = rate(await b.report(report(20))); // steady: raised too
    expect(near(raised, 100 / 3)).toBe(true);
    expect(b.unsettled).toBe(true); // its rate moved: it looks again until its next report
    clock.advance(600); // within the interval: c's next report reads as a full interval
    await c.report(report(60)); // grows: its target is 57, but a and b hold two thirds
    expect(c.unsettled).toBe(true);
    await a.rebalance(new Map());
    const lowered = rate(await b.rebalance(new Map()));
    expect(near(lowered, after[1] as number)).toBe(true); // 21.3, not the 33.3 its report gave
    expect(near(rate(await c.rebalance(new Map())), after[2] as number)).toBe(true);
    const now = await held();
    expect(now.every((h, i) => near(h, after[i] as number))).toBe(true);
    expect(now.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(100);
  });

  it("re-reads a waiting share at most MAX_REREADS times between two of its reports", async () => {
    const clock = new FakeClock();
    const board = new MemoryUsageBoard({ clock });
    let reads = 0;
    const counting: UsageBoard = {
      kind: "memory",
      report: (k, e, st) => board.report(k, e, st),
      read: (k, st) => {
        reads++;
        return board.read(k, st);
      },
      leave: (k, p) => board.leave(k, p),
      close: async () => {},
    };
    // Somebody else holds the whole limit and never reports again within the test.
    await board.report(KEY, { participant: "other", demand: 90, held: 100 }, 3000);
    const { s } = session({ board: counting });
    await s.report(report(90));
    expect(s.unsettled).toBe(true);
    for (let i = 0; i < MAX_REREADS + 3; i++) await s.rebalance(new Map());
    expect(reads).toBe(MAX_REREADS);
    expect(s.unsettled).toBe(false);
  });

  it("refuses a second domain on the same stream", async () => {
    const { s } = session();
    await s.report(report(1));
    await expect(s.report(report(1, "other"))).rejects.toThrow(
      'domain "other" differs from the stream\'s "edge"',
    );
  });
});
