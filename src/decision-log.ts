/**
 * What the logs say about decisions. At `debug`: one line per decision with the domain, each
 * descriptor as `key=value` pairs (values cut at {@link VALUE_CHARS} characters) and each
 * descriptor's result, like envoyproxy/ratelimit's lookup lines. At `info` and above: a warning when
 * a request names an unknown domain or a descriptor matches no rule (a typo in Envoy's `domain`, or
 * descriptors that drifted after a gateway change: both answer OK and limit nothing). Warnings name
 * the domain and the descriptor's keys, never values, at most one per domain and key set per
 * `everyMs`, with the count of those held back; at most {@link MAX_SHAPES} shapes are tracked.
 * When debug is off the per-decision hook is not wired at all: it costs the engine nothing.
 */
import type { DecisionObserver } from "./engine/metrics-port.js";
import type { Clock, Entry, RuleSet } from "./engine/types.js";
import type { Logger } from "./logger.js";

/** Characters of a descriptor value kept in a debug line. */
export const VALUE_CHARS = 64;
/** Domain and key sets tracked for the rate-limited warnings; more share one "other" entry. */
export const MAX_SHAPES = 1_000;

/** Options of {@link decisionLog}. */
export interface DecisionLogOptions {
  /** The rules in force (an unknown-domain warning lists the configured domains). */
  readonly rules: () => RuleSet;
  readonly clock: Clock;
  /** Least time between two warnings of one shape, ms. @default 60000 */
  readonly everyMs?: number;
}

/** `key=value,…` with each value cut to {@link VALUE_CHARS} characters. */
export function descriptorText(entries: readonly Entry[]): string {
  return entries
    .map((e) => `${e.key}=${e.value.length > VALUE_CHARS ? `${e.value.slice(0, VALUE_CHARS)}…` : e.value}`)
    .join(",");
}

/** The engine's `observer` option for `logger` (see the module comment). */
export function decisionLog(logger: Logger, o: DecisionLogOptions): { observer: DecisionObserver } {
  const warn = rateLimited(logger, o.clock, o.everyMs ?? 60_000);
  const observer: DecisionObserver = {
    unknownDomain(q) {
      warn(`unknown\0${q.domain}`, () => ({
        fields: { domain: q.domain, configuredDomains: [...o.rules().domains.keys()].sort().slice(0, 20) },
        message: `unknown domain ${JSON.stringify(q.domain)}: answered OK, nothing limited (check the domain of Envoy's ratelimit filter)`,
      }));
    },
    noMatch(domain, entries) {
      const keys = entries.map((e) => e.key);
      warn(`nomatch\0${domain}\0${keys.join("\0")}`, () => ({
        fields: { domain, keys },
        message: `descriptor [${keys.join(", ")}] matches no rule in domain ${JSON.stringify(domain)}: answered OK, nothing limited`,
      }));
    },
  };
  if (logger.isLevelEnabled("debug"))
    observer.decided = (q, answer, results) => {
      logger.debug(
        {
          domain: q.domain,
          descriptors: q.descriptors.map((d) => descriptorText(d.entries)),
          results,
          code: answer.overallCode,
        },
        "decision",
      );
    };
  return { observer };
}

interface Shape {
  lastAt: number;
  held: number;
}

/** A warn that writes each shape at most once per `everyMs`, telling how many were held back. */
function rateLimited(
  logger: Logger,
  clock: Clock,
  everyMs: number,
): (shape: string, line: () => { fields: Record<string, unknown>; message: string }) => void {
  const shapes = new Map<string, Shape>();
  const other: Shape = { lastAt: Number.NEGATIVE_INFINITY, held: 0 };
  return (key, line) => {
    let shape = shapes.get(key);
    if (shape === undefined && shapes.size < MAX_SHAPES) {
      shape = { lastAt: Number.NEGATIVE_INFINITY, held: 0 };
      shapes.set(key, shape);
    }
    const now = clock.now();
    const s = shape ?? other;
    if (now - s.lastAt < everyMs) {
      s.held++;
      return;
    }
    const { fields, message } = line();
    const extra =
      shape === undefined
        ? { moreShapes: `over ${MAX_SHAPES} shapes tracked; this line stands for all new ones` }
        : {};
    logger.warn({ ...fields, heldBack: s.held, everyMs, ...extra }, message);
    s.lastAt = now;
    s.held = 0;
  };
}
