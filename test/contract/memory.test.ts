import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { describeStoreContract } from "./store-contract.js";

describeStoreContract("memory", async () => {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  return {
    store,
    async advance(ms) {
      clock.advance(ms);
    },
    now: () => clock.now(),
    close: () => store.close(),
  };
});
