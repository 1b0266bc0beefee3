import { startRedis } from "../helpers/redis.js";
import { CHAOS_ARGS, outageSuite } from "./outage-suite.js";

outageSuite("a redis-server SIGKILLed under steady load and restarted on the same port", {
  async prepare() {
    const redis = await startRedis();
    return {
      plan: {
        store: redis.url,
        args: CHAOS_ARGS,
        fault: () => redis.kill("SIGKILL"),
        restore: () => redis.restart(),
      },
      stop: () => redis.stop(),
    };
  },
});
