/**
 * Rate limit response headers, in the format the operator chose (`--response-headers`):
 *
 * - `legacy` (default): `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch
 *   seconds) for the binding status on every response that matched a limit, plus `Retry-After`
 *   (whole seconds ≥ 1, plus optional jitter) on an enforced OVER_LIMIT only.
 * - `draft03`: Envoy's `enable_x_ratelimit_headers: DRAFT_VERSION_03` format: `X-RateLimit-Limit:
 *   10, 10;w=1;name="per_ip", 1000;w=3600`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` as delta seconds.
 * - `ietf`: the IETF httpapi structured fields `RateLimit-Policy: "name";q=10;w=1` and
 *   `RateLimit: "name";r=3;t=1`.
 * - `off`: none.
 * `Retry-After` accompanies an enforced OVER_LIMIT in every format but `off`.
 */
import type { Header, ReportedLimit } from "./types.js";
import { UNIT_MS } from "./types.js";

export type HeaderFormat = "legacy" | "draft03" | "ietf" | "off";

/** One descriptor's limited status as the header writer needs it. */
export interface HeaderStatus {
  readonly limit: ReportedLimit;
  readonly remaining: number;
  /** Seconds until reset (OK) or until admitted (OVER_LIMIT); undefined when it can never pass. */
  readonly resetSec: number | undefined;
  readonly over: boolean;
  /** Over limit and enforced (not shadow, not excused by quota mode). */
  readonly enforcedOver: boolean;
}

export interface HeaderOptions {
  readonly format: HeaderFormat;
  /** Epoch ms now, for `X-RateLimit-Reset` in legacy format. */
  readonly nowMs: number;
  /** Extra 0..jitterSec whole seconds added to Retry-After. */
  readonly jitterSec: number;
  readonly random: () => number;
}

/** The status that decides: the enforced denial with the longest wait, else the least remaining. */
export function bindingStatus(statuses: readonly HeaderStatus[]): HeaderStatus | undefined {
  let best: HeaderStatus | undefined;
  for (const s of statuses) {
    if (!best) best = s;
    else if (s.enforcedOver !== best.enforcedOver) {
      if (s.enforcedOver) best = s;
    } else if (s.enforcedOver) {
      if ((s.resetSec ?? 0) > (best.resetSec ?? 0)) best = s;
    } else if (s.remaining < best.remaining) best = s;
  }
  return best;
}

const windowSec = (limit: ReportedLimit) => UNIT_MS[limit.unit] / 1000;
const policyName = (limit: ReportedLimit) => limit.name ?? `${limit.requestsPerUnit}_per_${limit.unit}`;

export function rateLimitHeaders(statuses: readonly HeaderStatus[], opts: HeaderOptions): Header[] {
  if (opts.format === "off" || statuses.length === 0) return [];
  const binding = bindingStatus(statuses) as HeaderStatus;
  const reset = binding.resetSec ?? 0;
  const out: Header[] = [];
  switch (opts.format) {
    case "legacy":
      out.push(
        { key: "X-RateLimit-Limit", value: String(binding.limit.requestsPerUnit) },
        { key: "X-RateLimit-Remaining", value: String(binding.remaining) },
        { key: "X-RateLimit-Reset", value: String(Math.ceil(opts.nowMs / 1000) + reset) },
      );
      break;
    case "draft03": {
      const policies = statuses.map((s) => {
        const name = s.limit.name ? `;name="${s.limit.name.replace(/["\\]/g, "")}"` : "";
        return `${s.limit.requestsPerUnit};w=${windowSec(s.limit)}${name}`;
      });
      out.push(
        { key: "X-RateLimit-Limit", value: `${binding.limit.requestsPerUnit}, ${policies.join(", ")}` },
        { key: "X-RateLimit-Remaining", value: String(binding.remaining) },
        { key: "X-RateLimit-Reset", value: String(reset) },
      );
      break;
    }
    case "ietf": {
      const name = `"${policyName(binding.limit).replace(/["\\]/g, "")}"`;
      out.push(
        {
          key: "RateLimit-Policy",
          value: `${name};q=${binding.limit.requestsPerUnit};w=${windowSec(binding.limit)}`,
        },
        { key: "RateLimit", value: `${name};r=${binding.remaining};t=${reset}` },
      );
      break;
    }
  }
  if (binding.enforcedOver && binding.resetSec !== undefined) {
    const jitter = opts.jitterSec > 0 ? Math.floor(opts.random() * (opts.jitterSec + 1)) : 0;
    out.push({ key: "Retry-After", value: String(Math.max(1, binding.resetSec) + jitter) });
  }
  return out;
}
