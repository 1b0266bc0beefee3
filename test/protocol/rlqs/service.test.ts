/**
 * The RLQS method on a fake clock (the stream's handler, no transport): the stream idle timer, and
 * the close reason of a stream the transport ends inside a send.
 */
import { describe, expect, it } from "vitest";
import type { RlqsAction, RlqsConfigView } from "../../../src/engine/rlqs/messages.js";
import { Status, type StatusCode } from "../../../src/protocol/grpc/status.js";
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

/** How the fake transport answers a send: take it, or end the call with a status (as StreamCall does). */
type SendOutcome = "ok" | { readonly endWith: number };

function open(streamIdleMs?: number, onSend: () => SendOutcome = () => "ok") {
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
      const outcome = onSend();
      if (outcome === "ok") {
        sent.push(o);
        return true;
      }
      ctx.end(outcome.endWith as StatusCode, "ended by the transport");
      return false;
    },
    end: (code, message) => {
      if (ended.length > 0) return;
      ended.push({ code, message });
      handler?.closed();
    },
    get endCode() {
      return ended[0]?.code as StatusCode | undefined;
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

describe("RLQS close reasons", () => {
  it("counts a stream the transport ends inside a send by its status: slow_reader, internal", async () => {
    const slow = open(undefined, () => ({ endWith: Status.RESOURCE_EXHAUSTED }));
    slow.report(1);
    await slow.clock.tick(0);
    expect(slow.closed).toEqual(["slow_reader"]);
    const broken = open(undefined, () => ({ endWith: Status.INTERNAL }));
    broken.report(1);
    await broken.clock.tick(0);
    expect(broken.closed).toEqual(["internal"]);
    // The stream's own ends keep their reasons (the idle timer, above: idle).
    const fine = open(700);
    fine.report(1);
    await fine.clock.tick(700);
    expect(fine.closed).toEqual(["idle"]);
  });
});
