/** The RLQS method's stream idle timer on a fake clock (the stream's handler, no transport). */
import { describe, expect, it } from "vitest";
import type { RlqsAction, RlqsConfigView } from "../../../src/engine/rlqs/messages.js";
import type { StreamContext } from "../../../src/protocol/grpc/stream-call.js";
import { rlqsMethod, STREAM_IDLE_INTERVALS } from "../../../src/protocol/rlqs/service.js";
import { MemoryUsageBoard } from "../../../src/store/rlqs/memory-board.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { rlqsView } from "../../helpers/rlqs-config.js";

function config(): RlqsConfigView {
  const yaml = `domain: edge
rlqs:
  keys: [{ key: tenant }]
  reporting_interval: 400ms
  assignment_ttl: 4s
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: 100 }
`;
  return rlqsView(yaml);
}

function open(streamIdleMs?: number) {
  const clock = new FakeClock();
  const closed: string[] = [];
  const method = rlqsMethod({
    config,
    board: new MemoryUsageBoard({ clock }),
    localBoard: new MemoryUsageBoard({ clock }),
    instances: () => 1,
    clock,
    timers: clock,
    defaultPolicy: "local",
    keyPrefix: "",
    instanceId: "i",
    ...(streamIdleMs === undefined ? {} : { streamIdleMs }),
    streamEvents: { rlqsStreamOpened: () => {}, rlqsStreamClosed: (r) => closed.push(r) },
  });
  const ended: { code: number; message: string | undefined }[] = [];
  const sent: RlqsAction[][] = [];
  let handler: ReturnType<typeof method.open> | undefined;
  const ctx: StreamContext<RlqsAction[]> = {
    send: (o) => {
      sent.push(o);
      return true;
    },
    end: (code, message) => {
      if (ended.length > 0) return;
      ended.push({ code, message });
      handler?.closed();
    },
    headers: {} as StreamContext<RlqsAction[]>["headers"],
    peer: undefined,
    get ended() {
      return ended.length > 0;
    },
  };
  handler = method.open(ctx);
  const report = (n: number) =>
    handler?.message({
      domain: "edge",
      usages: [{ bucket: new Map([["tenant", "a"]]), elapsedMs: 0, allowed: n, denied: 0 }],
    });
  return { clock, ended, sent, closed, report };
}

describe("RLQS stream idle timer", () => {
  it("ends a stream OK after 5 reporting intervals without a report, and not while reports come", async () => {
    const s = open();
    s.report(1);
    await s.clock.tick(0);
    expect(s.sent).toHaveLength(1);
    for (let i = 0; i < 10; i++) {
      await s.clock.tick(400);
      s.report(1);
    }
    await s.clock.tick(STREAM_IDLE_INTERVALS * 400 - 1);
    expect(s.ended).toEqual([]);
    await s.clock.tick(1);
    expect(s.ended).toEqual([{ code: 0, message: "no usage report for 2000 ms" }]);
    expect(s.closed).toEqual(["idle"]);
  });

  it("uses the configured idle time, and the longest reporting interval before the first report", async () => {
    const configured = open(700);
    configured.report(1);
    await configured.clock.tick(699);
    expect(configured.ended).toEqual([]);
    await configured.clock.tick(1);
    expect(configured.ended[0]?.message).toBe("no usage report for 700 ms");

    const silent = open();
    await silent.clock.tick(STREAM_IDLE_INTERVALS * 400);
    expect(silent.ended).toEqual([{ code: 0, message: "no usage report for 2000 ms" }]);
  });
});
