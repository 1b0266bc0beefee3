/**
 * The store contract through the lease layer, for takes that carry no lease: the decorator must be
 * transparent to them (all-or-nothing, refunds, resets) whatever it holds for leased keys. Leased takes
 * answer from local knowledge by design (remaining is an estimate), so the exact-count cases of the
 * contract do not apply to them; their behaviour is in test/store/lease/.
 */
import { LeasedStore } from "../../src/store/lease/leased-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { describeOverdraftContract } from "./overdraft-contract.js";
import { describeStoreContract, type StoreHarness } from "./store-contract.js";

const leased = async (): Promise<StoreHarness> => {
  const clock = new FakeClock();
  const shared = new MemoryStore({ clock });
  const store = new LeasedStore({ inner: shared, backend: shared, clock });
  return {
    store,
    async advance(ms) {
      clock.advance(ms);
    },
    now: () => clock.now(),
    close: () => store.close(),
  };
};

describeStoreContract("lease(memory), unleased takes", leased);
// Checks, refunds and overdraft charges carry a lease here: the layer sends them to the shared bucket.
describeOverdraftContract("lease(memory), leased checks, refunds and overdraft charges", leased, {
  lease: { size: 8, ttlMs: 1000 },
});
