/**
 * Decision and hit counts per domain/rule pair, buffered between scrapes: the hot path of
 * {@link TollgateMetrics.decision} is two Map lookups and an add into a per-rule array, with no
 * object built per call; {@link DecisionCounts.flush} moves the counts into the prom-client counters
 * `tollgate_decisions_total` / `tollgate_hits_total` when scraped. At most `maxSeries` pairs, then
 * they share one `"_overflow_"` series.
 */
import type { DecisionResult } from "../engine/metrics-port.js";
import type { MetricSet } from "./definitions.js";
import { OVERFLOW } from "./series-cap.js";

const RESULTS: readonly DecisionResult[] = [
  "ok",
  "over_limit",
  "shadow_over_limit",
  "unlimited",
  "no_match",
  "policy_allow",
  "policy_deny",
  "fallback",
];
const RESULT_INDEX: Readonly<Record<DecisionResult, number>> = {
  ok: 0,
  over_limit: 1,
  shadow_over_limit: 2,
  unlimited: 3,
  no_match: 4,
  policy_allow: 5,
  policy_deny: 6,
  fallback: 7,
};
const N = RESULTS.length;

/**
 * Unflushed counts of one domain/rule pair: decisions per result at `[i]`, hits per result at
 * `[N + i]`. prom-client hashes label objects on every `inc` (as in `observe`:
 * docs/decisions/histogram.md), so the hot path adds to this array and the counters catch up when
 * scraped (see `flush`).
 */
interface RuleSeries {
  readonly domain: string;
  readonly rule: string;
  readonly pending: Float64Array;
  queued: boolean;
}

export class DecisionCounts {
  /** domain → rule → children; at most `maxSeries` pairs, then {@link overflowRule}. */
  private readonly rules = new Map<string, Map<string, RuleSeries>>();
  private ruleCount = 0;
  private readonly overflowRule = newSeries(OVERFLOW, OVERFLOW);
  /** Series with unflushed counts. */
  private readonly queued: RuleSeries[] = [];

  constructor(
    private readonly m: Pick<MetricSet, "decisions" | "hits">,
    private readonly maxSeries: number,
  ) {}

  /** One decision of `result` charging `hits`. */
  add(domain: string, rulePath: string, result: DecisionResult, hits: number): void {
    const series = this.ruleSeries(domain, rulePath);
    const { pending } = series;
    const i = RESULT_INDEX[result];
    pending[i] = (pending[i] ?? 0) + 1;
    if (hits > 0) pending[N + i] = (pending[N + i] ?? 0) + hits;
    if (!series.queued) {
      series.queued = true;
      this.queued.push(series);
    }
  }

  /** Export `results` of a pair at 0 (taking its series slot); nothing once the pairs overflow. */
  atZero(domain: string, rulePath: string, results: readonly DecisionResult[]): void {
    const series = this.ruleSeries(domain, rulePath);
    if (series === this.overflowRule) return;
    for (const result of results) this.m.decisions.inc({ domain, rule: rulePath, result }, 0);
  }

  /** Moves pending decision and hit counts into the prom-client counters. */
  flush(): void {
    for (const series of this.queued) {
      const { pending, domain, rule } = series;
      for (let i = 0; i < N; i++) {
        const result = RESULTS[i] as DecisionResult;
        const decided = pending[i] ?? 0;
        const hits = pending[N + i] ?? 0;
        if (decided > 0) this.m.decisions.inc({ domain, rule, result }, decided);
        if (hits > 0) this.m.hits.inc({ domain, rule, result }, hits);
      }
      pending.fill(0);
      series.queued = false;
    }
    this.queued.length = 0;
  }

  private ruleSeries(domain: string, rule: string): RuleSeries {
    let byRule = this.rules.get(domain);
    const hit = byRule?.get(rule);
    if (hit !== undefined) return hit;
    // A new domain/rule pair takes one slot; past the cap (e.g. a flood of unknown domains) they share one.
    if (this.ruleCount >= this.maxSeries) return this.overflowRule;
    this.ruleCount += 1;
    const made = newSeries(domain, rule);
    if (byRule === undefined) {
      byRule = new Map();
      this.rules.set(domain, byRule);
    }
    byRule.set(rule, made);
    return made;
  }
}

function newSeries(domain: string, rule: string): RuleSeries {
  return { domain, rule, pending: new Float64Array(2 * N), queued: false };
}
