import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { describeOverdraftContract } from "./overdraft-contract.js";
import { describeStoreContract, type StoreHarness } from "./store-contract.js";

const memory = async (): Promise<StoreHarness> => {
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
};

describeStoreContract("memory", memory);
describeOverdraftContract("memory", memory);
