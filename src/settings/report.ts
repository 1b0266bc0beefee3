/**
 * The startup report of envoyproxy/ratelimit's environment: which reference variables became which
 * tollgate settings, and which were read without effect (with the reason). `tollgate serve` logs it
 * as one line.
 */
import type { DerivedSetting } from "./envoyproxy-env.js";

/** Lines of the report: `REDIS_URL+REDIS_SOCKET_TYPE → --store redis://redis:6379`, `USE_STATSD: …`. */
export interface ReferenceEnvReport {
  readonly mapped: string[];
  readonly ignored: string[];
}

/** An empty report to fill. */
export function emptyReport(): ReferenceEnvReport {
  return { mapped: [], ignored: [] };
}

/** The ignored lines of a derived setting whose tollgate twin was given directly. */
export function shadowed(d: DerivedSetting, why: string): string[] {
  return d.from.map((name) => `${name}: ${why}`);
}
