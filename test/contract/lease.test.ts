/**
 * The store contract through the lease layer, for takes that carry no lease: the decorator must be
 * transparent to them (all-or-nothing, refunds, resets) whatever it holds for leased keys. Leased takes
 * answer from local knowledge by design (remaining is an estimate), so the exact-count cases of the
 * contract do not apply to them; their behaviour is in test/store/lease/.
 */
import { LeasedStore } from "../../src/store/lease/leased-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { describeStoreContract } from "./store-contract.js";

describeStoreContract("lease(memory), unleased takes", async () => {
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
});
