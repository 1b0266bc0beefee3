import { describe, expect, it } from "vitest";
import { parseH2loadOutput, quantile } from "../../bench/h2load.mjs";
import { parseOptions } from "../../bench/options.mjs";

const OUTPUT = `starting benchmark...
finished in 3.00s, 14464.00 req/s, 3.14MB/s
requests: 43392 total, 43904 started, 43392 done, 43380 succeeded, 10 failed, 2 errored, 0 timeout
status codes: 43380 2xx, 0 3xx, 0 4xx, 10 5xx
`;

describe("h2load driver helpers", () => {
  it("reads done, succeeded, failed (failed + errored) and the run time from h2load's summary", () => {
    expect(parseH2loadOutput(OUTPUT)).toEqual({ done: 43392, succeeded: 43380, failed: 12, seconds: 3 });
  });

  it("converts a run time printed in milliseconds to seconds", () => {
    const text = OUTPUT.replace("finished in 3.00s", "finished in 300.50ms");
    expect(parseH2loadOutput(text).seconds).toBeCloseTo(0.3005);
  });

  it("rejects output without a request summary instead of reporting zero", () => {
    expect(() => parseH2loadOutput("connect to 127.0.0.1 failed")).toThrow(/unexpected h2load output/);
  });

  it("takes nearest-rank quantiles of sorted latencies", () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(sorted, 0.5)).toBe(50);
    expect(quantile(sorted, 0.99)).toBe(99);
    expect(quantile(Float64Array.of(), 0.5)).toBeNaN();
  });
});

describe("bench options", () => {
  it("runs every mode and both scenarios for 10 s by default", () => {
    const o = parseOptions([]);
    expect(o.modes).toEqual(["raw", "grpcjs", "memory", "redis", "cluster", "lease"]);
    expect(parseOptions(["--modes", "raw,transport"]).modes).toEqual(["raw", "transport"]);
    expect(o.scenarios).toEqual(["hot", "tenants"]);
    expect([o.duration, o.connections, o.streams]).toEqual([10, 16, 32]);
  });

  it("shortens everything in smoke mode but keeps explicit flags", () => {
    const o = parseOptions(["--smoke", "--connections", "2"]);
    expect([o.duration, o.warmup, o.connections, o.rounds]).toEqual([0.5, 0.5, 2, 1]);
  });

  it("runs one tollgate process unless --workers says otherwise", () => {
    expect(parseOptions([]).workers).toBe(1);
    expect(parseOptions(["--workers", "2"]).workers).toBe(2);
    expect(() => parseOptions(["--workers", "two"])).toThrow(/--workers: expected a non-negative number/);
  });

  it("runs tollgate on its own HTTP/2 transport unless --grpc-transport names node", () => {
    expect(parseOptions([]).grpcTransport).toBe("tollgate");
    expect(parseOptions(["--grpc-transport", "node"]).grpcTransport).toBe("node");
    expect(() => parseOptions(["--grpc-transport", "nghttp2"])).toThrow(
      /--grpc-transport: unknown "nghttp2"/,
    );
  });

  it("runs the raw baseline as one process unless --raw-workers says otherwise", () => {
    expect(parseOptions([]).rawWorkers).toBe(1);
    expect(parseOptions(["--raw-workers", "2"]).rawWorkers).toBe(2);
    expect(() => parseOptions(["--raw-workers", "x"])).toThrow(
      /--raw-workers: expected a non-negative number/,
    );
  });

  it("drives the 50%-of-peak latency run from one h2load process with 8 streams unless told otherwise", () => {
    const o = parseOptions([]);
    expect([o.halfConnections, o.halfStreams]).toEqual([1, 8]);
    const p = parseOptions(["--half-connections", "4", "--half-streams", "2"]);
    expect([p.halfConnections, p.halfStreams]).toEqual([4, 2]);
    expect(() => parseOptions(["--half-streams", "x"])).toThrow(
      /--half-streams: expected a non-negative number/,
    );
  });

  it("names the flag and the choices when a mode is unknown", () => {
    expect(() => parseOptions(["--modes", "memory,postgres"])).toThrow(/--modes: unknown "postgres"/);
  });
});
