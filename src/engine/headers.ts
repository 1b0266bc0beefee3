/**
 * Rate limit response headers, in the format the operator chose (`--response-headers`):
 *
 * - `legacy` (default): `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch
 *   seconds) for the binding status on every response that matched a limit, plus `Retry-After`
 *   (whole seconds ≥ 1, plus optional jitter) on an enforced OVER_LIMIT only.
 * - `draft03`: Envoy's `enable_x_ratelimit_headers: DRAFT_VERSION_03` format: `X-RateLimit-Limit:
 *   10, 10;w=1;name="per_ip", 1000;w=3600`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` as delta seconds.
 * - `ietf`: the IETF httpapi structured fields `RateLimit-Policy: "name";q=10;w=1, "other";q=…`
 *   (every matched policy, binding first) and `RateLimit: "name";r=3;t=1` (the binding one).
 * - `off`: none.
 * `Retry-After` accompanies an enforced OVER_LIMIT in every format but `off`.
 */
import type { LimitHeaderItems } from "./compiled.js";
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

/** An RFC 8941 sf-string (also a valid draft-03 quoted-string): printable ASCII, `"` and `\` escaped. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]/g, "").replace(/["\\]/g, "\\$&")}"`;
}

/**
 * The per-limit items of every format. A configured limit carries them from compile time
 * (`ReportedLimit.headers`, config/hot-path.ts); a request-supplied override's are built per response.
 */
export function limitHeaderItems(limit: ReportedLimit): LimitHeaderItems {
  const w = windowSec(limit);
  const name = limit.name ? `;name=${quoted(limit.name)}` : "";
  const ietfName = quoted(limit.name ?? `${limit.requestsPerUnit}_per_${limit.unit}`);
  return {
    draft03: `${limit.requestsPerUnit};w=${w}${name}`,
    ietfName,
    ietfPolicy: `${ietfName};q=${limit.requestsPerUnit};w=${w}`,
  };
}

const stringsOf = (limit: ReportedLimit): LimitHeaderItems => limit.headers ?? limitHeaderItems(limit);

/** The headers of one response, for the statuses that matched a limit (empty when none did). */
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
      const policies = statuses.map((s) => stringsOf(s.limit).draft03);
      out.push(
        { key: "X-RateLimit-Limit", value: `${binding.limit.requestsPerUnit}, ${policies.join(", ")}` },
        { key: "X-RateLimit-Remaining", value: String(binding.remaining) },
        { key: "X-RateLimit-Reset", value: String(reset) },
      );
      break;
    }
    case "ietf": {
      // Every matched policy (binding first, one per name) so the field stays stable across
      // responses; the RateLimit item reports the binding one.
      const { ietfName, ietfPolicy } = stringsOf(binding.limit);
      const policies = [ietfPolicy];
      const names = new Set([ietfName]);
      for (const s of statuses) {
        const other = stringsOf(s.limit);
        if (names.has(other.ietfName)) continue;
        names.add(other.ietfName);
        policies.push(other.ietfPolicy);
      }
      out.push(
        { key: "RateLimit-Policy", value: policies.join(", ") },
        { key: "RateLimit", value: `${ietfName};r=${binding.remaining};t=${reset}` },
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
