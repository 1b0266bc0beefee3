import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer, type HttpServer } from "../../src/protocol/http.js";

const LIMIT = 64 * 1024;

interface Sent {
  readonly status?: number;
  readonly body?: string;
  readonly connection?: string;
  readonly error?: string;
}

/** POSTs `total` bytes in 16 KiB writes, each after the previous one drained, so the server reads mid-upload. */
function upload(port: number, total: number): Promise<Sent> {
  return new Promise((resolve) => {
    const req = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/echo",
      headers: { "content-length": total },
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode, body, connection: res.headers.connection }));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    const chunk = Buffer.alloc(16 * 1024, 0x78);
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        const more = req.write(chunk.subarray(0, n));
        if (!more) {
          req.once("drain", () => setTimeout(pump, 1));
          return;
        }
        if (sent < total) {
          setTimeout(pump, 1);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe("the HTTP side door's body bound", () => {
  let http: HttpServer;
  let port: number;
  beforeAll(async () => {
    http = createHttpServer({
      maxBodyBytes: LIMIT,
      routes: new Map([["POST /echo", (req) => ({ status: 200, body: `${req.body.length}\n` })]]),
    });
    ({ port } = await http.listen("127.0.0.1", 0));
  });
  afterAll(async () => {
    await http.close();
  });

  it("answers a body within the bound", async () => {
    expect(await upload(port, LIMIT)).toMatchObject({ status: 200, body: `${LIMIT}\n` });
  });

  it("answers 413 with the reason to a client still uploading past the bound, not a reset", async () => {
    const got = await upload(port, 3 * LIMIT);
    expect(got).toEqual({
      status: 413,
      body: `request body larger than ${LIMIT} bytes\n`,
      connection: "close",
    });
    expect(await upload(port, 100)).toMatchObject({ status: 200, body: "100\n" });
  });

  it("cuts a body far past the bound without reading it all, and keeps serving", async () => {
    const got = await upload(port, 40 * LIMIT);
    expect(got.status).toBeUndefined();
    expect(got.error).toMatch(/^(ECONNRESET|EPIPE)$/);
    expect(await upload(port, 100)).toMatchObject({ status: 200, body: "100\n" });
  });
});
