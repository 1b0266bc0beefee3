/**
 * Bidirectional-streaming calls on the gRPC server, on both transports: messages in as their frames
 * complete (split anywhere), responses out on the open stream, the per-connection stream cap,
 * oversized messages, a client reset, and a drain ending open streams OK. Frame-level flow control
 * of the own transport is in stream-h2.test.ts.
 */
import type { ClientHttp2Session } from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import {
  createGrpcServer,
  type GrpcServer,
  type GrpcTransport,
  type StreamMethod,
} from "../../../src/protocol/grpc/server.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import type { H2Limits } from "../../../src/protocol/h2/limits.js";
import { grpcFrame, openStream, rawCall, rawSession } from "./raw-client.js";

/** Calls whose handler heard `closed` (cancelled, connection gone, or ended). */
let closedCalls = 0;

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
    closed: () => {
      closedCalls++;
    },
  }),
};

let server: GrpcServer | undefined;
let session: ClientHttp2Session | undefined;
afterEach(async () => {
  session?.destroy();
  await server?.close();
  server = undefined;
});

async function start(
  transport: GrpcTransport,
  maxStreamsPerConnection = 2,
  limits: Partial<H2Limits> = {},
): Promise<number> {
  closedCalls = 0;
  server = createGrpcServer({
    limits,
    methods: [],
    streamMethods: [shout],
    maxMessageBytes: 64,
    transport,
    maxStreamsPerConnection,
  });
  return (await server.listen("127.0.0.1", 0)).port;
}

const open = (s: ClientHttp2Session) => openStream(s, shout.path);

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 250 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

const TRANSPORTS: readonly GrpcTransport[] = ["tollgate", "node"];

describe.each(TRANSPORTS)("streaming calls (%s transport)", (transport) => {
  it("answers each message as it completes, even split across DATA frames", async () => {
    session = await rawSession(await start(transport));
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
    session = await rawSession(await start(transport, 2));
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
    session = await rawSession(await start(transport));
    const call = open(session);
    call.req.write(grpcFrame(Buffer.alloc(65, 97)));
    const t = await call.trailers;
    expect(t["grpc-status"]).toBe(String(Status.RESOURCE_EXHAUSTED));
    expect(server?.openStreams()).toBe(0);
  });

  it("keeps taking messages past a connection window of request bytes (consumed ones reopen it)", async () => {
    // The own transport holds at most its smallest connection window (64 KiB + one message).
    session = await rawSession(await start(transport, 2, { connectionWindow: 1 }));
    const call = open(session);
    const one = grpcFrame(Buffer.alloc(40, 120)); // 45 bytes
    const count = 2000; // 90,000 bytes: more than the 65,535 of the connection window
    for (let i = 0; i < count; i++) call.req.write(one);
    call.req.end();
    expect((await call.trailers)["grpc-status"]).toBe("0");
    expect(Buffer.concat(call.data).length).toBe(count * 45);
  });

  it("closes the call when the client resets its stream, freeing its slot", async () => {
    session = await rawSession(await start(transport, 1));
    const a = open(session);
    a.req.write(grpcFrame(Buffer.from("a")));
    await until(() => a.data.length > 0);
    expect(server?.openStreams()).toBe(1);
    a.req.close(0x8); // RST_STREAM CANCEL
    await until(() => server?.openStreams() === 0 && closedCalls === 1);
    const b = open(session);
    b.req.end(grpcFrame(Buffer.from("b")));
    expect((await b.trailers)["grpc-status"]).toBe("0");
  });

  it("ends open streams OK on drain, after GOAWAY, and the drain completes", async () => {
    session = await rawSession(await start(transport));
    let goaway = false;
    session.on("goaway", () => {
      goaway = true;
    });
    const a = open(session);
    a.req.write(grpcFrame(Buffer.from("a")));
    await until(() => a.data.length > 0);
    const drained = server?.drain(5000);
    const t = await a.trailers;
    expect(t["grpc-status"]).toBe("0");
    a.req.end(); // as a gRPC client does once the status is in
    const started = Date.now();
    await drained;
    expect(Date.now() - started).toBeLessThan(2500); // ended by the streams, not the drain timeout
    expect(goaway).toBe(true);
    expect(server?.openStreams()).toBe(0);
    expect(closedCalls).toBe(1);
    server = undefined; // drained: closed already
  });
});
