import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeResp, startFakeResp } from "../helpers/fake-resp.js";
import { type Service, startService } from "../helpers/service.js";
import { policyConfigDir } from "./policies.js";
import { GRPC, type RlsClient, rlsClient } from "./rls-client.js";

const MAX_IN_FLIGHT = 3;
const STORE_MS = 400;

describe("the service over a slow store with a small --max-in-flight", () => {
  let fake: FakeResp;
  let svc: Service;
  let client: RlsClient;
  beforeAll(async () => {
    fake = await startFakeResp({ kind: "slow", ms: STORE_MS });
    svc = await startService({
      config: policyConfigDir(),
      store: fake.url,
      args: [
        "--max-in-flight",
        String(MAX_IN_FLIGHT),
        "--store-deadline",
        "2s",
        "--redis-command-timeout",
        "2s",
        "--breaker-failures",
        "1000",
      ],
    });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await fake?.close();
  });

  it("answers the excess RESOURCE_EXHAUSTED at once while the admitted ones wait on the store", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        client.call("deny", [[["tenant", `t${i}`]]], { deadlineMs: 5000 }),
      ),
    );
    const rejected = answers.filter((a) => a.grpcStatus === GRPC.RESOURCE_EXHAUSTED);
    const decided = answers.filter((a) => a.grpcStatus !== GRPC.RESOURCE_EXHAUSTED);
    expect(decided).toHaveLength(MAX_IN_FLIGHT);
    expect(rejected).toHaveLength(12 - MAX_IN_FLIGHT);
    // The admitted ones waited for the slow store (its error answer, then the deny policy).
    for (const a of decided) {
      expect(a.latencyMs).toBeGreaterThanOrEqual(STORE_MS - 20);
      expect(a).toMatchObject({ grpcStatus: 0, code: "OVER_LIMIT" });
    }
    // The rejected ones did not queue behind them.
    for (const a of rejected) expect(a.latencyMs).toBeLessThan(STORE_MS / 2);
  });
});
