/**
 * A bounded cache of metric children. Label values that come from requests (a descriptor's
 * `detailed_metric` value, a request-supplied limit override, an unknown domain) can take any value,
 * so every such metric keeps at most `max` distinct series; further values share one overflow series.
 */

/** Label value of the series that absorbs values past the cap. */
export const OVERFLOW = "_overflow_";

export class SeriesCap<T> {
  private readonly series = new Map<string, T>();
  private overflow: T | undefined;

  /**
   * @param max Distinct keys kept before overflow (the overflow series is extra, so at most `max + 1`).
   * @param make Builds the child for a key; called with {@link OVERFLOW} for the overflow series.
   */
  constructor(
    private readonly max: number,
    private readonly make: (key: string) => T,
  ) {
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`maxSeries must be an integer >= 1, got ${max}`);
  }

  /** The child of `key`, or the overflow child once `max` keys are held. */
  get(key: string): T {
    const hit = this.series.get(key);
    if (hit !== undefined) return hit;
    if (this.series.size >= this.max) {
      this.overflow ??= this.make(OVERFLOW);
      return this.overflow;
    }
    const made = this.make(key);
    this.series.set(key, made);
    return made;
  }

  /** Number of distinct keys held (not counting overflow). */
  get size(): number {
    return this.series.size;
  }

  /** Whether values have overflowed. */
  get overflowed(): boolean {
    return this.overflow !== undefined;
  }
}
