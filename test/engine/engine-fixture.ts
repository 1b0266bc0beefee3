/** A real Engine over parsed YAML, a MemoryStore and a fake clock, for decision tests. */
import { parseConfigText } from "../../src/config/document.js";
import { Engine, type EngineOptions } from "../../src/engine/decide.js";
import { noopMetrics } from "../../src/engine/metrics-port.js";
import type { QueryDescriptor, RateLimitQuery } from "../../src/engine/types.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { Take } from "../../src/store/store.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * `answerNow: false` leaves out the store's `takeNow`, so every decision goes through the promise
 * path (the Redis stores' path); by default decisions are synchronous, as on the in-process store.
 */
export function engineFor(yaml: string, opts: Partial<EngineOptions> = {}, { answerNow = true } = {}) {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  const { ruleSet } = parseConfigText("test.yaml", yaml);
  const calls: (readonly Take[])[] = [];
  const counting = {
    kind: store.kind,
    take: (t: readonly Take[]) => {
      calls.push(t.slice());
      return store.take(t);
    },
    ...(answerNow
      ? {
          takeNow: (t: readonly Take[]) => {
            calls.push(t.slice());
            return store.takeNow(t);
          },
        }
      : {}),
    reset: (k: readonly string[]) => store.reset(k),
    ready: () => store.ready(),
    close: () => store.close(),
  };
  const engine = new Engine({
    rules: () => ruleSet,
    store: counting,
    clock,
    metrics: noopMetrics,
    random: () => 0,
    ...opts,
  });
  return { engine, clock, store, calls, storeCalls: () => calls.length };
}

export function desc(entries: string, extra: Partial<QueryDescriptor> = {}): QueryDescriptor {
  return {
    entries: entries.split(",").map((kv) => {
      const [key = "", value = ""] = kv.split("=");
      return { key, value };
    }),
    limit: undefined,
    hitsAddend: undefined,
    ...extra,
  };
}

export function query(domain: string, descriptors: QueryDescriptor[], hitsAddend = 0): RateLimitQuery {
  return { domain, descriptors, hitsAddend };
}
