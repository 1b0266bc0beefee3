/**
 * Bidirectional-streaming calls on the gRPC server (node transport): messages in as their frames
 * complete (split anywhere), responses out on the open stream, the per-connection stream cap,
 * oversized messages, and the own transport's UNIMPLEMENTED.
 */
import type { ClientHttp2Session, ClientHttp2Stream } from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { createGrpcServer, type GrpcServer, type StreamMethod } from "../../../src/protocol/grpc/server.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import { grpcFrame, rawCall, rawSession } from "./raw-client.js";

/** Echoes every message back upper-cased; ends OK when the client half-closes. */
const shout: StreamMethod<string, string> = {
  path: "/test.Shout/Stream",
  decode: (bytes) => Buffer.from(bytes).toString("utf8"),
  encode: (s) => Buffer.from(s.toUpperCase()),
  open: (ctx) => ({
    message: (m) => {
      ctx.send(m);
    },
    halfClosed: () => ctx.end(Status.OK),
    closed: () => {},
  }),
};

let server: GrpcServer | undefined;
let session: ClientHttp2Session | undefined;
afterEach(async () => {
  session?.destroy();
  await server?.close();
  server = undefined;
});

async function start(transport: "node" | "tollgate", maxStreamsPerConnection = 2): Promise<number> {
  server = createGrpcServer({
    methods: [],
    streamMethods: [shout],
    maxMessageBytes: 64,
    transport,
    maxStreamsPerConnection,
  });
  return (await server.listen("127.0.0.1", 0)).port;
}

function open(s: ClientHttp2Session): {
  req: ClientHttp2Stream;
  data: Buffer[];
  trailers: Promise<Record<string, unknown>>;
} {
  const req = s.request({
    ":method": "POST",
    ":path": shout.path,
    "content-type": "application/grpc",
    te: "trailers",
  });
  const data: Buffer[] = [];
  req.on("data", (c: Buffer) => data.push(c));
  const trailers = new Promise<Record<string, unknown>>((resolve) => {
    req.on("trailers", (t) => resolve(t));
    req.on("response", (h) => {
      if (h["grpc-status"] !== undefined) resolve(h);
    });
  });
  return { req, data, trailers };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 250 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

describe("streaming calls (node transport)", () => {
  it("answers each message as it completes, even split across DATA frames", async () => {
    session = await rawSession(await start("node"));
    const call = open(session);
    const two = Buffer.concat([grpcFrame(Buffer.from("hi")), grpcFrame(Buffer.from("there"))]);
    call.req.write(two.subarray(0, 3));
    call.req.write(two.subarray(3, 9));
    await until(() => Buffer.concat(call.data).length === 7);
    call.req.end(two.subarray(9));
    expect((await call.trailers)["grpc-status"]).toBe("0");
    expect(Buffer.concat(call.data)).toEqual(
      Buffer.concat([grpcFrame(Buffer.from("HI")), grpcFrame(Buffer.from("THERE"))]),
    );
  });

  it("refuses a stream past the per-connection cap, and admits one again once a stream ends", async () => {
    session = await rawSession(await start("node", 2));
    const a = open(session);
    const b = open(session);
    a.req.write(grpcFrame(Buffer.from("a")));
    b.req.write(grpcFrame(Buffer.from("b")));
    await until(() => a.data.length > 0 && b.data.length > 0);
    const third = await rawCall(session, { path: shout.path, chunks: [grpcFrame(Buffer.from("c"))] });
    expect(third.trailers?.["grpc-status"] ?? third.headers["grpc-status"]).toBe(
      String(Status.RESOURCE_EXHAUSTED),
    );
    expect(
      decodeURIComponent(String(third.headers["grpc-message"] ?? third.trailers?.["grpc-message"])),
    ).toMatch(/too many streams on this connection: 2 open, limit 2/);
    a.req.end();
    await a.trailers;
    const fourth = open(session);
    fourth.req.end(grpcFrame(Buffer.from("d")));
    expect((await fourth.trailers)["grpc-status"]).toBe("0");
    b.req.end();
  });

  it("ends a stream whose message exceeds the limit RESOURCE_EXHAUSTED", async () => {
    session = await rawSession(await start("node"));
    const call = open(session);
    call.req.write(grpcFrame(Buffer.alloc(65, 97)));
    const t = await call.trailers;
    expect(t["grpc-status"]).toBe(String(Status.RESOURCE_EXHAUSTED));
    expect(server?.openStreams()).toBe(0);
  });
});

describe("streaming calls (own transport)", () => {
  it("answers UNIMPLEMENTED naming --grpc-transport node", async () => {
    session = await rawSession(await start("tollgate"));
    const reply = await rawCall(session, { path: shout.path, chunks: [grpcFrame(Buffer.from("x"))] });
    const status = reply.trailers?.["grpc-status"] ?? reply.headers["grpc-status"];
    expect(status).toBe(String(Status.UNIMPLEMENTED));
    expect(
      decodeURIComponent(String(reply.headers["grpc-message"] ?? reply.trailers?.["grpc-message"])),
    ).toMatch(/streaming method.*--grpc-transport node/);
  });
});
