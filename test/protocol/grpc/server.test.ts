import type { ClientHttp2Session } from "node:http2";
import { connect as netConnect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type CallContext,
  createGrpcServer,
  type GrpcServer,
  type GrpcTransport,
  type UnaryMethod,
} from "../../../src/protocol/grpc/server.js";
import { GrpcError, Status } from "../../../src/protocol/grpc/status.js";
import { grpcFrame, pieces, rawCall, rawSession } from "./raw-client.js";

type Handler = (input: Uint8Array, ctx: CallContext) => Uint8Array | Promise<Uint8Array>;

/** Echo method: the handler sees the raw message bytes; `handler` is swapped per test. */
let handler: Handler;
const echo: UnaryMethod<Uint8Array, Uint8Array> = {
  path: "/test.Echo/Say",
  decode: (bytes) => {
    if (bytes[0] === 0xff) throw new Error("not an echo message");
    return bytes;
  },
  encode: (out) => out,
  handle: (input, ctx) => handler(input, ctx),
};

const MAX = 1024;
let server: GrpcServer;
let port: number;
let session: ClientHttp2Session;
let errors: unknown[];

async function start(opts: { maxInFlight?: number; idleTimeoutMs?: number } = {}): Promise<void> {
  errors = [];
  server = createGrpcServer({
    methods: [echo],
    maxMessageBytes: MAX,
    transport,
    ...opts,
    onError: (err) => errors.push(err),
  });
  port = (await server.listen("127.0.0.1", 0)).port;
  session = await rawSession(port);
}

const hello = grpcFrame(Buffer.from("hello"));

const TRANSPORTS: readonly GrpcTransport[] = ["tollgate", "node"];
let transport: GrpcTransport;

describe.each(TRANSPORTS)("grpc server (%s transport)", (t) => {
  beforeEach(async () => {
    transport = t;
    handler = async (input) => input;
    await start();
  });

  afterEach(async () => {
    session.destroy();
    await server.close();
  });

  it("answers a unary call with headers, one framed message and grpc-status 0 in trailers", async () => {
    const reply = await rawCall(session, { chunks: [hello] });
    expect(reply.headers[":status"]).toBe(200);
    expect(reply.headers["content-type"]).toMatch(/^application\/grpc/);
    expect(reply.trailers?.["grpc-status"]).toBe("0");
    expect(reply.body.equals(hello)).toBe(true);
  });

  it("accepts application/grpc+proto and a content-type with parameters", async () => {
    for (const type of ["application/grpc+proto", "application/grpc; charset=utf-8"]) {
      const reply = await rawCall(session, { headers: { "content-type": type }, chunks: [hello] });
      expect(reply.grpcStatus).toBe(Status.OK);
    }
  });

  it("answers HTTP 415 to a content-type that is not gRPC", async () => {
    const reply = await rawCall(session, {
      headers: { "content-type": "application/json" },
      chunks: [hello],
    });
    expect(reply.headers[":status"]).toBe(415);
    expect(reply.grpcStatus).toBeUndefined();
  });

  it("reassembles one message sent across many DATA chunks", async () => {
    const message = grpcFrame(Buffer.from("a message split into many small pieces"));
    const reply = await rawCall(session, { chunks: pieces(message, 3) });
    expect(reply.grpcStatus).toBe(Status.OK);
    expect(reply.body.equals(message)).toBe(true);
  });

  it("answers UNIMPLEMENTED trailers-only for an unknown method", async () => {
    const reply = await rawCall(session, { path: "/test.Echo/Shout", chunks: [hello] });
    expect(reply.trailers).toBeUndefined();
    expect(reply.headers["grpc-status"]).toBe(String(Status.UNIMPLEMENTED));
    expect(reply.grpcMessage).toContain("/test.Echo/Shout");
  });

  it("answers INTERNAL to a request that ends inside a message", async () => {
    const reply = await rawCall(session, { chunks: [hello.subarray(0, 7)] });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
    expect(reply.grpcMessage).toBe("request ended inside a message");
  });

  it("answers INTERNAL to a request with no message at all", async () => {
    const reply = await rawCall(session, { chunks: [] });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
  });

  it("answers INTERNAL to a unary request carrying two messages", async () => {
    const reply = await rawCall(session, { chunks: [hello, hello] });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
    expect(reply.grpcMessage).toContain("more than one message");
  });

  it("answers INVALID_ARGUMENT when the method cannot decode the message", async () => {
    const reply = await rawCall(session, { chunks: [grpcFrame(Buffer.from([0xff, 1, 2]))] });
    expect(reply.grpcStatus).toBe(Status.INVALID_ARGUMENT);
    expect(reply.grpcMessage).toContain("not an echo message");
  });

  it("answers RESOURCE_EXHAUSTED to a message larger than maxMessageBytes without waiting for its body", async () => {
    const big = Buffer.alloc(5);
    big.writeUInt32BE(10 * 1024 * 1024, 1);
    const reply = await rawCall(session, { chunks: [big] });
    expect(reply.grpcStatus).toBe(Status.RESOURCE_EXHAUSTED);
    expect(reply.trailers).toBeUndefined();
  });

  it("answers RESOURCE_EXHAUSTED to a real 10 MB message and keeps serving", async () => {
    const reply = await rawCall(session, {
      chunks: pieces(grpcFrame(Buffer.alloc(10 * 1024 * 1024, 7)), 1 << 20),
    });
    expect(reply.grpcStatus).toBe(Status.RESOURCE_EXHAUSTED);
    expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.OK);
  });

  it("decodes a gzip-compressed message when grpc-encoding is gzip", async () => {
    const reply = await rawCall(session, {
      headers: { "grpc-encoding": "gzip" },
      chunks: [grpcFrame(Buffer.from("zipped"), { compressed: true })],
    });
    expect(reply.grpcStatus).toBe(Status.OK);
    expect(reply.body.subarray(5).toString()).toBe("zipped");
  });

  it("answers RESOURCE_EXHAUSTED when a gzip message inflates past maxMessageBytes", async () => {
    const reply = await rawCall(session, {
      headers: { "grpc-encoding": "gzip" },
      chunks: [grpcFrame(Buffer.alloc(MAX + 1), { compressed: true })],
    });
    expect(reply.grpcStatus).toBe(Status.RESOURCE_EXHAUSTED);
  });

  it("answers INTERNAL to a compressed flag without a declared grpc-encoding", async () => {
    const reply = await rawCall(session, {
      chunks: [grpcFrame(Buffer.from("zipped"), { compressed: true })],
    });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
  });

  it("answers UNIMPLEMENTED with grpc-accept-encoding to an unsupported grpc-encoding", async () => {
    const reply = await rawCall(session, { headers: { "grpc-encoding": "br" }, chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.UNIMPLEMENTED);
    expect(reply.headers["grpc-accept-encoding"]).toContain("gzip");
  });

  it("answers DEADLINE_EXCEEDED when grpc-timeout passes and aborts the handler's signal", async () => {
    let signal: AbortSignal | undefined;
    handler = (_input, ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    };
    const reply = await rawCall(session, { headers: { "grpc-timeout": "5m" }, chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.DEADLINE_EXCEEDED);
    expect(signal?.aborted).toBe(true);
    expect(server.inFlight()).toBe(0);
  });

  it("gives the handler the deadline from grpc-timeout", async () => {
    let deadline: number | undefined;
    handler = async (input, ctx) => {
      deadline = ctx.deadline;
      return input;
    };
    const before = Date.now();
    await rawCall(session, { headers: { "grpc-timeout": "2S" }, chunks: [hello] });
    expect(deadline).toBeGreaterThanOrEqual(before + 2000);
    await rawCall(session, { chunks: [hello] });
    expect(deadline).toBeUndefined();
  });

  it("honours a grpc-timeout longer than a Node timer can hold instead of expiring at once", async () => {
    let deadline: number | undefined;
    handler = async (input, ctx) => {
      deadline = ctx.deadline;
      // Slower than the 1 ms an overflowing setTimeout would fire after.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return input;
    };
    const before = Date.now();
    const reply = await rawCall(session, { headers: { "grpc-timeout": "99999999H" }, chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.OK);
    expect(deadline).toBeGreaterThanOrEqual(before + 99_999_999 * 3_600_000);
  });

  it("answers INTERNAL to a malformed grpc-timeout", async () => {
    const reply = await rawCall(session, { headers: { "grpc-timeout": "soon" }, chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
    expect(reply.grpcMessage).toContain("grpc-timeout");
  });

  it("percent-encodes grpc-message", async () => {
    handler = async () => {
      throw new GrpcError(Status.INVALID_ARGUMENT, "über 100%\nnext");
    };
    const reply = await rawCall(session, { chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.INVALID_ARGUMENT);
    expect(reply.grpcMessage).toBe("%C3%BCber 100%25%0Anext");
  });

  it("answers a handler's unexpected error as INTERNAL, never UNKNOWN, and reports it", async () => {
    handler = async () => {
      throw new Error("boom");
    };
    const reply = await rawCall(session, { chunks: [hello] });
    expect(reply.grpcStatus).toBe(Status.INTERNAL);
    expect(errors).toHaveLength(1);
  });

  it("answers a handler's output returned as is, and a GrpcError it throws synchronously, alike", async () => {
    handler = (input) => input;
    const reply = await rawCall(session, { chunks: [hello] });
    expect(reply.trailers?.["grpc-status"]).toBe("0");
    expect(reply.body.equals(hello)).toBe(true);
    handler = () => {
      throw new GrpcError(Status.UNAVAILABLE, "no");
    };
    const refused = await rawCall(session, { chunks: [hello] });
    expect([refused.grpcStatus, refused.headers["grpc-message"]]).toEqual([Status.UNAVAILABLE, "no"]);
    expect(server.inFlight()).toBe(0);
    expect(errors).toHaveLength(0);
  });

  it("answers a handler that throws synchronously as INTERNAL", async () => {
    handler = () => {
      throw new Error("sync boom");
    };
    expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.INTERNAL);
  });

  it("never sends UNKNOWN or OK as an error status", async () => {
    for (const code of [Status.UNKNOWN, Status.OK]) {
      handler = async () => {
        throw new GrpcError(code, "odd");
      };
      expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.INTERNAL);
    }
  });

  it("answers RESOURCE_EXHAUSTED at once past maxInFlight", async () => {
    await server.close();
    session.destroy();
    await start({ maxInFlight: 1 });
    let release: () => void = () => {};
    handler = (input) =>
      new Promise((resolve) => {
        release = () => resolve(input);
      });
    const first = rawCall(session, { chunks: [hello] });
    await waitFor(() => server.inFlight() === 1);
    const second = await rawCall(session, { chunks: [hello] });
    expect(second.grpcStatus).toBe(Status.RESOURCE_EXHAUSTED);
    release();
    expect((await first).grpcStatus).toBe(Status.OK);
    expect(server.inFlight()).toBe(0);
  });

  it("counts a call the client cancels as finished", async () => {
    handler = () => new Promise(() => {});
    const req = session.request({
      ":method": "POST",
      ":path": "/test.Echo/Say",
      "content-type": "application/grpc",
    });
    req.end(hello);
    await waitFor(() => server.inFlight() === 1);
    req.close();
    await waitFor(() => server.inFlight() === 0);
  });

  it("stays up when a handler answers after its client's connection is gone", async () => {
    let release: () => void = () => {};
    handler = (input) =>
      new Promise((resolve) => {
        release = () => resolve(input);
      });
    const other = await rawSession(port);
    void rawCall(other, { chunks: [hello] }).catch(() => {});
    await waitFor(() => server.inFlight() === 1);
    other.destroy();
    await waitFor(() => server.inFlight() === 0);
    release();
    handler = async (input) => input;
    expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.OK);
  });

  it("stays up after garbage bytes and a bad HTTP/2 preface on its port", async () => {
    await new Promise<void>((resolve) => {
      const sock = netConnect(port, "127.0.0.1", () =>
        sock.end(Buffer.from("GET / HTTP/1.1\r\n\r\n\x00\xff garbage")),
      );
      sock.on("data", () => {});
      sock.on("error", () => resolve());
      sock.on("close", () => resolve());
    });
    await new Promise<void>((resolve) => {
      const sock = netConnect(port, "127.0.0.1", () => {
        sock.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        // A DATA frame on stream 0 is a connection error (PROTOCOL_ERROR).
        sock.end(Buffer.from([0, 0, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]));
      });
      sock.on("data", () => {});
      sock.on("error", () => resolve());
      sock.on("close", () => resolve());
    });
    expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.OK);
  });

  it(
    "closes a connection left idle, such as a peer that half-closed inside a frame",
    { timeout: 5000 },
    async () => {
      await server.close();
      session.destroy();
      await start({ idleTimeoutMs: 50 });
      const received: Buffer[] = [];
      await new Promise<void>((resolve) => {
        const sock = netConnect(port, "127.0.0.1", () => {
          // A SETTINGS frame header announcing 5000 payload bytes, then 2 of them and FIN.
          sock.end(
            Buffer.from([
              ...Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
              0,
              0x13,
              0x88,
              4,
              0,
              0,
              0,
              0,
              0,
              1,
              2,
            ]),
          );
        });
        sock.on("data", (d: Buffer) => received.push(d));
        sock.on("close", () => resolve());
      });
      // The server said goodbye: its last frame is a GOAWAY (type 7).
      const bytes = Buffer.concat(received);
      expect(bytes.subarray(-17)[3]).toBe(7);
      session.destroy();
      session = await rawSession(port);
      expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.OK);
    },
  );

  it("keeps a connection that carries calls open past the idle timeout, and closes it once it goes quiet", async () => {
    await server.close();
    session.destroy();
    const idleMs = 200;
    await start({ idleTimeoutMs: idleMs });
    let goawayAt = 0;
    session.once("goaway", () => {
      goawayAt = performance.now();
    });
    // One call every 30 ms for 700 ms: 3.5 idle timeouts long, never quiet for one (the margin lets a
    // loaded machine stall the loop for ~150 ms without closing it).
    const busyUntil = performance.now() + 700;
    while (performance.now() < busyUntil) {
      expect((await rawCall(session, { chunks: [hello] })).grpcStatus).toBe(Status.OK);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(goawayAt).toBe(0);
    const quietSince = performance.now();
    const deadline = quietSince + 3000;
    while (goawayAt === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(goawayAt).toBeGreaterThan(0);
    // Not before the timeout: the last call ended ~30 ms before `quietSince` (the sweep runs every
    // quarter of the timeout, so it closes within 1-1.25 timeouts of the last traffic).
    expect(goawayAt - quietSince).toBeGreaterThanOrEqual(idleMs - 35);
    session = await rawSession(port);
  });

  it("frees the in-flight slot of a call stalled inside its message once the connection stays idle", async () => {
    await server.close();
    session.destroy();
    await start({ idleTimeoutMs: 50 });
    const stalled = await rawSession(port);
    const stream = stalled.request({
      ":method": "POST",
      ":path": "/test.Echo/Say",
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("error", () => {});
    stream.write(hello.subarray(0, 3)); // half a frame, no grpc-timeout, never finished
    await new Promise((r) => setTimeout(r, 20));
    expect(server.inFlight()).toBe(1);
    const deadline = Date.now() + 2000;
    while (server.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(server.inFlight()).toBe(0);
    stalled.destroy();
    session = await rawSession(port);
  });

  it("drains: sends GOAWAY, finishes calls in flight, then closes", async () => {
    let release: () => void = () => {};
    handler = (input) =>
      new Promise((resolve) => {
        release = () => resolve(input);
      });
    const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
    const inflight = rawCall(session, { chunks: [hello] });
    await waitFor(() => server.inFlight() === 1);
    const drained = server.drain(10_000);
    await goaway;
    release();
    expect((await inflight).grpcStatus).toBe(Status.OK);
    await drained;
    await expect(rawSession(port)).rejects.toThrow();
  });

  it("drain gives up on calls still running after its timeout", async () => {
    handler = () => new Promise(() => {});
    void rawCall(session, { chunks: [hello] }).catch(() => {});
    await waitFor(() => server.inFlight() === 1);
    await server.drain(1);
    expect(server.inFlight()).toBe(0);
  });
});

/** Yield to the event loop until `cond` holds (bounded; no timed assertion). */
async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(cond()).toBe(true);
}
