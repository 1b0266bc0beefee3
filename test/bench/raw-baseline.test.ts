/**
 * The raw node:http2 baseline as one process and as node:cluster workers (`--raw-workers`): it
 * answers the fixed gRPC response either way, the workers share one port, and stopping the primary
 * leaves no worker behind.
 */
import { describe, expect, it } from "vitest";
import { encodeFrames } from "../../bench/frames.mjs";
import { processTree } from "../../bench/measure.mjs";
import { probe } from "../../bench/probe.mjs";
import { startBaseline } from "../../bench/targets.mjs";

describe("raw node:http2 baseline", () => {
  it.each([
    1, 2,
  ])("answers grpc-status 0 with %i process(es) serving, and stops all of them", async (workers) => {
    const raw = await startBaseline("raw", "./baselines/raw-http2.mjs", [], ["--workers", String(workers)]);
    const tree = processTree(raw.pid);
    try {
      // The primary alone, or the primary and its workers.
      expect(tree.length).toBe(workers === 1 ? 1 : workers + 1);
      // grpc-status 0 and an OK answer to each of 4 calls (the harness's own probe; it rejects otherwise).
      const frames = encodeFrames([{ tenant: "hot", route: "read", ip: "10.0.0.1" }]);
      expect(await probe(raw.grpcPort, [...frames, ...frames, ...frames, ...frames])).toEqual({ OK: 4 });
    } finally {
      await raw.stop();
    }
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 20));
    expect(tree.filter(alive)).toEqual([]);
  });
});
