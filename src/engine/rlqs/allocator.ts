/**
 * The fair allocator of RLQS (docs/rlqs.md, "Fairness model"): pure functions, no I/O, no clock.
 *
 * Every Envoy reporting one bucket is a participant with a recent demand (allowed + denied requests
 * per second) and the rate it currently holds. Its target share of the shared limit L is
 *
 *     floor + (L − n·floor) · demand / Σ demand        (an equal split of the pool when Σ demand = 0)
 *     floor = minShare · L / n
 *
 * so targets sum to L exactly and a quiet Envoy still gets `floor` to start with. What is sent is the
 * target capped by the room the others leave (L − Σ their held rates), so the sum of held rates
 * stays within L while shares move: a growing Envoy gets the rate a shrinking one gave up once the
 * shrinking one has taken its lower assignment. A participant capped that way is *short* (see
 * {@link unsettled}); its instance re-reads the board between reports until the room is there
 * (engine/rlqs/rebalancer.ts). Small moves are not re-sent (hysteresis, `threshold`): Envoy starts a
 * new token bucket full on every changed assignment, so needless changes would hand out extra
 * bursts; but a participant above its target gives the excess back at once while another is short
 * and the excesses together would be a material raise for it,
 * so hysteresis never keeps anybody materially short (see {@link excessMatters}).
 */

/** Shortfalls below this fraction of the limit are rounding (token buckets have 1/1000 of it). */
const ROUNDING = 0.001;

/** One Envoy's view of a bucket, as aggregated across tollgate instances. */
export interface Participant {
  readonly id: string;
  /** Recent demand, requests per second (allowed + denied). */
  readonly demand: number;
  /** Rate it holds now, requests per second (0 when it holds no assignment). */
  readonly held: number;
}

/** The knobs of one domain's `rlqs` section that the allocator reads. */
export interface FairParams {
  /** The shared limit, requests per second. */
  readonly limit: number;
  /** Floor as a fraction of an equal split (0..1). */
  readonly minShare: number;
  /** Relative change below which a held rate is kept (0..1). */
  readonly threshold: number;
}

/** Target shares, one per participant in order; they sum to `limit` (up to float rounding). */
export function targetShares(limit: number, minShare: number, demands: readonly number[]): number[] {
  const n = demands.length;
  if (n === 0) return [];
  const floor = (Math.min(Math.max(minShare, 0), 1) * limit) / n;
  const pool = limit - floor * n;
  let total = 0;
  for (const d of demands) total += d > 0 && Number.isFinite(d) ? d : 0;
  return demands.map((d) => {
    const w = d > 0 && Number.isFinite(d) ? d : 0;
    return floor + (total > 0 ? (pool * w) / total : pool / n);
  });
}

/** Whether `p` holds materially less than `target` (it would be re-sent if there were room). */
function isShort(params: FairParams, p: Participant, target: number): boolean {
  return target - p.held > Math.max(params.threshold * p.held, ROUNDING * params.limit);
}

/**
 * Whether some participant of the view is short of its target: shares are still moving, and the
 * room a short one waits for comes from a report or a re-read, not from its own next report.
 */
export function unsettled(params: FairParams, all: readonly Participant[]): boolean {
  const targets = targetShares(
    params.limit,
    params.minShare,
    all.map((p) => p.demand),
  );
  return all.some((p, i) => isShort(params, p, targets[i] as number));
}

/** Whether `selfId`, holding `rate`, is short of its target in the view `all` (see `unsettled`). */
export function shortOf(
  params: FairParams,
  all: readonly Participant[],
  selfId: string,
  rate: number,
): boolean {
  const index = all.findIndex((p) => p.id === selfId);
  if (index < 0) return false;
  const target = targetShares(
    params.limit,
    params.minShare,
    all.map((p) => p.demand),
  )[index] as number;
  return isShort(params, { id: selfId, demand: 0, held: rate }, target);
}

/**
 * The rate to assign to participant `self` (which is in `all`), given what it was last sent
 * (`previous`, undefined for none). Returns `previous` unchanged when the move is smaller than the
 * threshold and still fits in the room, unless `previous` is above the target while another
 * participant is short and the excesses add up to a material raise for it ({@link excessMatters}:
 * the excess is what that one waits for).
 */
export function nextRate(
  params: FairParams,
  all: readonly Participant[],
  selfId: string,
  previous: number | undefined,
): number {
  const index = all.findIndex((p) => p.id === selfId);
  if (index < 0) throw new RangeError(`participant ${selfId} is not in the view`);
  const targets = targetShares(
    params.limit,
    params.minShare,
    all.map((p) => p.demand),
  );
  const target = targets[index] as number;
  let others = 0;
  for (const p of all) if (p.id !== selfId) others += p.held;
  const room = Math.max(0, params.limit - others);
  if (
    previous !== undefined &&
    previous <= room &&
    Math.abs(target - previous) < params.threshold * previous
  ) {
    if (!(previous > target && excessMatters(params, all, targets, index, previous))) return previous;
  }
  return Math.min(target, room);
}

/**
 * Whether the rates held above their targets (participant `index` holding `previous`) add up to
 * a material raise for somebody else who is short: more than `threshold` of what that one holds.
 * Only then does an Envoy inside the hysteresis give its excess back. A smaller excess would be
 * re-sent for nothing a short Envoy could use as a material raise, and every changed assignment
 * restarts that Envoy's bucket full (a burst); so while nobody short could use it, the excess stays,
 * and a short Envoy stays short by at most `threshold` of its own rate through the others' hysteresis.
 */
function excessMatters(
  params: FairParams,
  all: readonly Participant[],
  targets: readonly number[],
  index: number,
  previous: number,
): boolean {
  let excess = 0;
  for (const [i, p] of all.entries())
    excess += Math.max(0, (i === index ? previous : p.held) - (targets[i] as number));
  return all.some(
    (p, i) => i !== index && isShort(params, p, targets[i] as number) && excess > params.threshold * p.held,
  );
}
