import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../../src/metrics/metrics.js";
import type { GuardEvents } from "../../../src/store/guard/events.js";
import { type FakeResp, parseCommands, startFakeResp } from "../../helpers/fake-resp.js";

describe("fake RESP peer", () => {
  let peer: FakeResp | undefined;
  const clients: Redis[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.disconnect();
    await peer?.close();
  });
  const connect = (p: FakeResp) => {
    const c = new Redis({
      port: p.port,
      host: "127.0.0.1",
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    c.on("error", () => {});
    clients.push(c);
    return c;
  };

  it("parses array and inline commands and keeps an incomplete tail", () => {
    const { names, rest } = parseCommands("*1\r\n$4\r\nPING\r\nget k\r\n*2\r\n$3\r\nGET\r\n$1");
    expect(names).toEqual(["PING", "GET"]);
    expect(rest).toBe("*2\r\n$3\r\nGET\r\n$1");
  });

  it("answers PING after the configured delay in slow mode", async () => {
    peer = await startFakeResp({ kind: "slow", ms: 5 });
    expect(await connect(peer).ping()).toBe("PONG");
    expect(peer.commands).toContain("PING");
  });

  it("closes the connection on the first command in drop mode", async () => {
    peer = await startFakeResp({ kind: "drop" });
    await expect(connect(peer).ping()).rejects.toThrow();
    expect(peer.connections).toBeGreaterThanOrEqual(1);
  });

  it("answers PING but not scripts in ping mode", async () => {
    peer = await startFakeResp({ kind: "ping" });
    const c = new Redis({ port: peer.port, host: "127.0.0.1", commandTimeout: 50 });
    c.on("error", () => {});
    clients.push(c);
    expect(await c.ping()).toBe("PONG");
    await expect(c.eval("return 1", 0)).rejects.toThrow(/timed out/i);
  });
});

describe("GuardEvents", () => {
  it("is implemented by the metrics module, which turns it into gauges", async () => {
    const metrics = new TollgateMetrics({ processMetrics: false });
    const events: GuardEvents = metrics;
    events.breakerState("open");
    events.degraded(true);
    const text = await metrics.text();
    expect(text).toMatch(/^tollgate_breaker_state 2$/m);
    expect(text).toMatch(/^tollgate_degraded 1$/m);
  });
});
