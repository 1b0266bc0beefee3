import { startFakeResp } from "../helpers/fake-resp.js";
import { startRedis } from "../helpers/redis.js";
import { CHAOS_ARGS, outageSuite } from "./outage-suite.js";

// A Redis that keeps its connections open and never answers: the real server frozen with SIGSTOP
// (the established connection stays up, commands go unanswered), thawed with SIGCONT.
outageSuite("a redis-server frozen by SIGSTOP under steady load and thawed", {
  async prepare() {
    const redis = await startRedis();
    const signal = (s: NodeJS.Signals) => async () => {
      process.kill(redis.pid, s);
    };
    return {
      plan: { store: redis.url, args: CHAOS_ARGS, fault: signal("SIGSTOP"), restore: signal("SIGCONT") },
      stop: async () => {
        process.kill(redis.pid, "SIGCONT");
        await redis.stop();
      },
    };
  },
});

// A fake RESP peer that accepts connections and never answers, from the service's start; then it
// goes away and a real redis-server takes its port. The client's ready check times out against the
// peer, so it keeps reconnecting (at most 500 ms apart); the first reconnect to the real server
// half-opens the breaker at once (Store.onReady), so recovery does not wait for the open time.
outageSuite("a store that accepts connections and never answers, replaced by a real redis-server", {
  brokenFromStart: true,
  async prepare() {
    const fake = await startFakeResp({ kind: "hang" });
    let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
    return {
      plan: {
        store: fake.url,
        args: CHAOS_ARGS,
        fault: async () => {},
        restore: async () => {
          await fake.close();
          redis = await startRedis({ port: fake.port });
        },
      },
      stop: async () => {
        await fake.close();
        await redis?.stop();
      },
    };
  },
});
