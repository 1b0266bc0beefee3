/** Tier configs parsed with the tiers schema, compiled to `Tiers`, and an Engine over them. */
import { parseConfigText } from "../../src/config/document.js";
import { ConfigError, type ConfigProblem, formatProblem } from "../../src/config/errors.js";
import { BASE_SCHEMA, extendSchema } from "../../src/config/schema.js";
import { compileTiers, TIERS_SCHEMA_ROWS } from "../../src/config/sections/tiers.js";
import { Engine } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import { matchTier, type Tiers } from "../../src/engine/tiers.js";
import type { RuleSet } from "../../src/engine/types.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "./fake-clock.js";

export const TIERS_SCHEMA = extendSchema(BASE_SCHEMA, TIERS_SCHEMA_ROWS);

/** Parse and compile; throws ConfigError with every problem (base config and tiers section). */
export function compileText(yaml: string, tenants: ReadonlyMap<string, string> = new Map()) {
  const load = parseConfigText("tiers.yaml", yaml, { schema: TIERS_SCHEMA });
  const problems: ConfigProblem[] = [];
  const tables = compileTiers(load.documents, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ruleSet: load.ruleSet, tiers: { tables, tenants } as Tiers };
}

/** The formatted problems of an invalid config text. */
export function problemsOf(yaml: string): string[] {
  try {
    compileText(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  throw new Error("expected the config to be invalid");
}

/** An engine whose rules and tiers are read through mutable references (a reload swaps them). */
export function tierEngine(initial: { ruleSet: RuleSet; tiers: Tiers }) {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  const state = { ...initial };
  const engine = new Engine({
    rules: () => state.ruleSet,
    store,
    clock,
    metrics: noopMetrics,
    fallback: (domain, entries) => matchTier(state.tiers, domain, entries),
  });
  return { engine, store, clock, state };
}

export const EDGE = `domain: edge
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - route_class: read
          rate_limit: { unit: minute, requests_per_unit: 10 }
        - rate_limit: { unit: minute, requests_per_unit: 2 }
    - name: gold
      limits:
        - route_class: read
          rate_limits:
            - { unit: minute, requests_per_unit: 100 }
            - { unit: day, requests_per_unit: 10000, name: daily }
        - route_class: write
          rate_limit: { unit: minute, requests_per_unit: 50, burst: 60 }
`;
