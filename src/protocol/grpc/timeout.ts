/**
 * `grpc-timeout` header: 1–8 ASCII digits and a unit (H, M, S, m milliseconds, u micro, n nano).
 */
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** Milliseconds, or undefined when the header is malformed. */
export function parseGrpcTimeout(value: string): number | undefined {
  const unit = UNIT_MS[value.charAt(value.length - 1)];
  const digits = value.slice(0, -1);
  if (unit === undefined || digits.length === 0 || digits.length > 8 || !/^\d+$/.test(digits))
    return undefined;
  return Number(digits) * unit;
}
