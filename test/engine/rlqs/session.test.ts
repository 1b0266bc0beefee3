/** RlqsSession on a fake clock and in-process boards: re-sends, TTL refresh, failure policies. */
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../../src/config/document.js";
import type { ConfigProblem } from "../../../src/config/errors.js";
import { FULL_SCHEMA } from "../../../src/config/full-schema.js";
import { compileRlqs } from "../../../src/config/sections/rlqs.js";
import type { RlqsConfigView } from "../../../src/engine/rlqs/messages.js";
import { RlqsSession } from "../../../src/engine/rlqs/session.js";
import { NO_TIERS } from "../../../src/engine/tiers.js";
import type { FailurePolicy } from "../../../src/engine/types.js";
import type { UsageBoard } from "../../../src/store/rlqs/board.js";
import { MemoryUsageBoard } from "../../../src/store/rlqs/memory-board.js";
import { StoreError } from "../../../src/store/store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

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
  const load = parseConfigText("edge.yaml", yaml, { schema: FULL_SCHEMA });
  const problems: ConfigProblem[] = [];
  const rlqs = compileRlqs(load.documents, problems);
  expect(problems).toEqual([]);
  return { rules: load.ruleSet, tiers: NO_TIERS, rlqs };
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

  it("refuses a second domain on the same stream", async () => {
    const { s } = session();
    await s.report(report(1));
    await expect(s.report(report(1, "other"))).rejects.toThrow(
      'domain "other" differs from the stream\'s "edge"',
    );
  });
});
