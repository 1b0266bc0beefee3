/**
 * One lease refill: a grant from the shared store, bounded by the grant deadline, single-flight per
 * key (leased-store.ts calls it on a miss and, ahead of need, when a lease runs low).
 */

import type { Lease } from "./lease.js";
import type { LeasedStoreOptions, LeaseMetrics } from "./leased-store.js";

/** What a refill reads of the lease store's options. */
export type RefillOptions = Pick<LeasedStoreOptions, "available" | "grantDeadlineMs" | "clock" | "backend">;

/** Top `lease` up by at least `need` tokens (its refill in flight, if any, is returned instead). */
export function refillLease(
  lease: Lease,
  need: number,
  o: RefillOptions,
  metrics: Pick<LeaseMetrics, "leaseGranted">,
): Promise<void> {
  if (lease.refill) return lease.refill;
  lease.failed = false;
  if (o.available && !o.available()) {
    lease.failed = true;
    return Promise.resolve();
  }
  const deadline = o.grantDeadlineMs ?? 10;
  // A grant that answers after the deadline still lands in the lease (its tokens are taken either
  // way); the requests waiting for it have moved on to the inner store by then.
  // Times are taken when the grant is sent: a fixed window's end is then never later than Redis' one.
  const sentAt = o.clock.now();
  const grant = o.backend.grant({ key: lease.key, policy: lease.policy, cost: lease.want(need) }).then(
    (g) => {
      lease.granted(sentAt, g.granted, g.remaining, g.resetAfterMs);
      if (g.granted > 0) metrics.leaseGranted(g.granted);
    },
    () => {
      lease.failed = true;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      lease.failed = true;
      resolve();
    }, deadline);
  });
  lease.refill = Promise.race([grant, timeout]).finally(() => {
    clearTimeout(timer);
    lease.refill = undefined;
  });
  return lease.refill;
}
