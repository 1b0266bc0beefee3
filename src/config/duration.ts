/**
 * Durations in config, written as an integer with a unit: `250ms`, `5s`, `1m`, `2h`.
 */

const DURATION = /^(\d{1,9})(ms|s|m|h)$/;
const FACTOR: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  const [, amount, unit] = m;
  const factor = unit === undefined ? undefined : FACTOR[unit];
  if (amount === undefined || factor === undefined) return undefined;
  return Number(amount) * factor;
}
