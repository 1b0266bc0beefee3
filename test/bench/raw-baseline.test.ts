/**
 * The raw node:http2 baseline as one process and as node:cluster workers (`--raw-workers`): it
 * answers the fixed gRPC response either way, the workers share one port, and stopping the primary
 * leaves no worker behind.
 */
import { connect } from "node:http2";
import { describe, expect, it } from "vitest";
import { encodeFrames, RLS_PATH } from "../../bench/frames.mjs";
import { processTree } from "../../bench/measure.mjs";
import { startBaseline } from "../../bench/targets.mjs";

/** One unary call: the HTTP status and grpc-status trailer. */
function call(port: number): Promise<{ status: number; grpcStatus: string }> {
  const [body] = encodeFrames([{ tenant: "hot", route: "read", ip: "10.0.0.1" }]);
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
      te: "trailers",
    });
    let status = 0;
    req.on("response", (h) => {
      status = Number(h[":status"]);
    });
    req.on("trailers", (t) => {
      resolve({ status, grpcStatus: String(t["grpc-status"]) });
      session.close();
    });
    req.on("data", () => {});
    req.on("error", reject);
    req.end(body);
  });
}

describe("raw node:http2 baseline", () => {
  it.each([
    1, 2,
  ])("answers grpc-status 0 with %i process(es) serving, and stops all of them", async (workers) => {
    const raw = await startBaseline("raw", "./baselines/raw-http2.mjs", [], ["--workers", String(workers)]);
    const tree = processTree(raw.pid);
    try {
      // The primary alone, or the primary and its workers.
      expect(tree.length).toBe(workers === 1 ? 1 : workers + 1);
      for (let i = 0; i < 4; i++) expect(await call(raw.grpcPort)).toEqual({ status: 200, grpcStatus: "0" });
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
