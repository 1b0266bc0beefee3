/**
 * The fixed answer both baselines send: shaped like tollgate's real answer to a bench request
 * (three OK statuses with their limits, legacy X-RateLimit headers), so the ceiling moves as many
 * bytes as a real decision does.
 */
const status = (name, remaining) => ({
  code: "OK",
  current_limit: { requests_per_unit: 1_000_000, unit: "SECOND", name },
  limit_remaining: remaining,
  duration_until_reset: { seconds: 1, nanos: 0 },
});

/** A RateLimitResponse as a proto-loader plain object (see bench/frames.mjs LOADER_OPTIONS). */
export const FIXED_RESPONSE = Object.freeze({
  overall_code: "OK",
  statuses: [status("per_ip", 999_999), status("per_tenant", 999_999), status("read", 1_999_999)],
  response_headers_to_add: [
    { key: "X-RateLimit-Limit", value: "1000000" },
    { key: "X-RateLimit-Remaining", value: "999999" },
    { key: "X-RateLimit-Reset", value: "1800000000" },
  ],
});
