/**
 * The hot-path forms of a compiled rule: everything a request needs that depends on config alone,
 * computed once when the config is compiled (config/hot-path.ts) and frozen, so no request builds it
 * and no cache keyed by object identity stands in for it.
 *
 * The precomputed bytes and strings are private fields behind getters: they are part of the type,
 * never of the object's own enumerable fields, so a spread (`{ ...policy, limit }`) or a JSON dump of
 * a policy or reported limit cannot carry bytes that no longer match its numbers, and the objects
 * still compare equal to the plain values they report.
 */

import type { Calendar } from "./calendar.js";
import type { KeyCache } from "./key-cache.js";
import type { Policy, ReportedLimit, Unit } from "./types.js";

/** Header items of one reported limit (engine/headers.ts writes them). */
export interface LimitHeaderItems {
  /** draft-03 quota policy item, e.g. `10;w=1;name="per_ip"`. */
  readonly draft03: string;
  /** IETF policy name item, e.g. `"per_ip"`. */
  readonly ietfName: string;
  /** IETF `RateLimit-Policy` value, e.g. `"per_ip";q=10;w=1`. */
  readonly ietfPolicy: string;
}

/** A configured limit as a status reports it, with its response bytes and header items. */
export class CompiledLimit implements ReportedLimit {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly name: string | undefined;
  readonly #wire: string;
  readonly #headers: LimitHeaderItems;

  /**
   * `wire`: the `RateLimitResponse.RateLimit` body (protocol/response-wire.ts), one char per byte
   * (latin1); `headers`: its header items.
   */
  constructor(limit: ReportedLimit, wire: string, headers: LimitHeaderItems) {
    this.requestsPerUnit = limit.requestsPerUnit;
    this.unit = limit.unit;
    this.name = limit.name;
    this.#wire = wire;
    this.#headers = Object.freeze({ ...headers });
    Object.freeze(this);
  }

  get wire(): string {
    return this.#wire;
  }

  get headers(): LimitHeaderItems {
    return this.#headers;
  }
}

/** A policy of the compiled config with the RESP bytes of its script arguments. */
export class CompiledPolicy implements Policy {
  readonly algorithm: Policy["algorithm"];
  readonly limit: number;
  readonly periodMs: number;
  readonly burst: number;
  declare readonly calendar?: Calendar;
  declare readonly maxDebt?: number;
  readonly #resp: string | undefined;

  /**
   * `resp`: the bulk strings of `limit, periodMs, burst, maxDebt` as the merged take call sends them
   * (store/redis/resp.ts), one char per byte; undefined for a calendar window, whose arguments
   * change with the window.
   */
  constructor(policy: Policy, resp: string | undefined) {
    this.algorithm = policy.algorithm;
    this.limit = policy.limit;
    this.periodMs = policy.periodMs;
    this.burst = policy.burst;
    // Only the fields the policy has: the same own fields as policyOf's object.
    if (policy.calendar !== undefined) (this as { calendar?: Calendar }).calendar = policy.calendar;
    if (policy.maxDebt !== undefined) (this as { maxDebt?: number }).maxDebt = policy.maxDebt;
    this.#resp = resp;
    Object.freeze(this);
  }

  get resp(): string | undefined {
    return this.#resp;
  }
}

/** One limit of a rule as the planner charges it. */
export interface PlannedLimit {
  /** What a status reports: a {@link CompiledLimit} for a configured limit. */
  readonly reported: ReportedLimit;
  /** Policy per shard (length 1 when not sharded). */
  readonly policies: readonly Policy[];
  /** Key tail per shard; the key of shard s is `plan.keyBase + tails[s]`. */
  readonly tails: readonly string[];
}

/** Index of the first requests_per_unit 0 limit of `limits`, else -1 (`RulePlan.blocked`). */
export function blockedIndex(limits: readonly PlannedLimit[]): number {
  return limits.findIndex((l) => l.reported.requestsPerUnit === 0);
}

/** What the planner needs of a rule, computed when the rule is compiled. */
export interface RulePlan {
  /** Shards of every limit (1 = not sharded), capped by engine/shards.ts. */
  readonly shards: number;
  readonly limits: readonly PlannedLimit[];
  /** Index into `limits` of a requests_per_unit 0 limit, else -1. */
  readonly blocked: number;
  /**
   * The rule's bucket keys by entry values (engine/key-cache.ts): the one mutable object a compiled
   * rule holds, a bounded memo of strings that are a function of the entries, the domain's key head
   * and the frozen `tails` alone (docs/decisions/compiled-config.md).
   */
  readonly keys: KeyCache;
}
