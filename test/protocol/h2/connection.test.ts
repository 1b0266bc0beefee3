/**
 * The own HTTP/2 transport at the frame level: what test/protocol/grpc/server.test.ts cannot make a
 * node:http2 client do (CONTINUATION, padding, a tiny flow-control window, request trailers, protocol
 * errors). A raw socket sends hand-built frames and reads the server's frames back.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGrpcServer, type GrpcServer, type UnaryMethod } from "../../../src/protocol/grpc/server.js";
import { literalField, PREFACE } from "../../../src/protocol/h2/frames.js";
import { grpcFrame, rawCall, rawSession } from "../grpc/raw-client.js";
import {
  CONTINUATION,
  DATA,
  frame,
  GOAWAY,
  goaway,
  goawayCode,
  HEADERS,
  hasEnd,
  headerLists,
  PING,
  PRIORITY,
  RawConnection,
  RST_STREAM,
  requestBlock,
  SETTINGS,
  settings,
  u32,
  WINDOW_UPDATE,
} from "./raw-h2.js";

let seenHeaders: Readonly<Record<string, unknown>> | undefined;
const echo: UnaryMethod<Uint8Array, Uint8Array> = {
  path: "/test.Echo/Say",
  decode: (bytes) => bytes,
  encode: (out) => out,
  handle: (input, ctx) => {
    seenHeaders = ctx.headers;
    return input;
  },
};

/** A server whose calls wait until `release()`. */
function heldServer(): { slow: GrpcServer; release: () => void } {
  const waiting: (() => void)[] = [];
  const slow = createGrpcServer({
    methods: [
      {
        ...echo,
        handle: (input) =>
          new Promise<Uint8Array>((resolve) => {
            waiting.push(() => resolve(input));
          }),
      },
    ],
    maxMessageBytes: 1024,
    transport: "tollgate",
  });
  return {
    slow,
    release: () => {
      for (const f of waiting.splice(0)) f();
    },
  };
}

let server: GrpcServer;
let port: number;
let errors: unknown[];
let conn: RawConnection;

beforeEach(async () => {
  errors = [];
  server = createGrpcServer({
    methods: [echo],
    maxMessageBytes: 1 << 20,
    transport: "tollgate",
    onError: (err) => errors.push(err),
  });
  port = (await server.listen("127.0.0.1", 0)).port;
  conn = new RawConnection(port);
});

afterEach(async () => {
  conn.close();
  await server.close();
});

describe("own HTTP/2 transport, frame level", () => {
  it("opens with SETTINGS and the default connection window, ACKs the client's SETTINGS and answers PING", async () => {
    conn.open();
    conn.send(frame(PING, 0, 0, Buffer.from("12345678")));
    await conn.until((fs) => fs.some((f) => f.type === PING), "PING ACK");
    const [first] = conn.frames;
    expect(first?.type).toBe(SETTINGS);
    expect(first?.flags).toBe(0);
    // The window grows only as request bytes are held (recv-flow.ts), never ahead of them.
    expect(conn.frames.some((f) => f.type === WINDOW_UPDATE)).toBe(false);
    expect(conn.frames.some((f) => f.type === SETTINGS && f.flags === 1)).toBe(true);
    const ping = conn.frames.find((f) => f.type === PING);
    expect(ping?.flags).toBe(1);
    expect(ping?.payload.toString()).toBe("12345678");
  });

  it("reads a header block split over HEADERS and CONTINUATION, with padding and priority", async () => {
    conn.open();
    const block = requestBlock();
    const cut = 20;
    // HEADERS with PADDED (3 bytes) and PRIORITY (5 bytes), no END_HEADERS.
    const headersPayload = Buffer.concat([
      Buffer.from([3]),
      Buffer.from([0, 0, 0, 0, 16]),
      block.subarray(0, cut),
      Buffer.alloc(3),
    ]);
    const message = grpcFrame(Buffer.from("split"));
    conn.send(
      frame(HEADERS, 0x8 | 0x20, 1, headersPayload),
      frame(CONTINUATION, 0, 1, block.subarray(cut, cut + 10)),
      frame(CONTINUATION, 0x4, 1, block.subarray(cut + 10)),
      // Padded DATA with END_STREAM.
      frame(DATA, 0x1 | 0x8, 1, Buffer.concat([Buffer.from([2]), message, Buffer.alloc(2)])),
    );
    await conn.until(hasEnd(1), "an answer on stream 1");
    const lists = headerLists(conn.of(1));
    expect(lists[0]?.[":status"]).toBe("200");
    expect(lists[0]?.["content-type"]).toBe("application/grpc");
    expect(lists[1]?.["grpc-status"]).toBe("0");
    const data = Buffer.concat(conn.of(1).flatMap((f) => (f.type === DATA ? [f.payload] : [])));
    expect(data).toEqual(message);
  });

  it("ends a call on request trailers (HEADERS with END_STREAM after its DATA)", async () => {
    conn.open();
    const message = grpcFrame(Buffer.from("trailers"));
    conn.send(
      frame(HEADERS, 0x4, 1, requestBlock()),
      frame(DATA, 0, 1, message),
      frame(HEADERS, 0x4 | 0x1, 1, Buffer.from(literalField("x-trailer", "1"))),
    );
    await conn.until(hasEnd(1), "an answer on stream 1");
    expect(headerLists(conn.of(1))[1]?.["grpc-status"]).toBe("0");
  });

  it("holds response DATA and trailers beyond the client's window until its WINDOW_UPDATE", async () => {
    // Stream window 10 bytes: the 105-byte answer must wait for the client.
    conn.open(settings([[4, 10]]));
    const message = grpcFrame(Buffer.alloc(100, 7));
    conn.send(frame(HEADERS, 0x4, 1, requestBlock()), frame(DATA, 0x1, 1, message));
    await conn.until((fs) => fs.some((f) => f.id === 1 && f.type === DATA), "the first DATA");
    await new Promise((r) => setTimeout(r, 50));
    const early = conn.of(1);
    expect(early.filter((f) => f.type === DATA).reduce((n, f) => n + f.payload.length, 0)).toBe(10);
    expect(early.filter((f) => f.type === HEADERS)).toHaveLength(1); // no trailers yet
    conn.send(frame(WINDOW_UPDATE, 0, 1, u32(1000)));
    await conn.until(hasEnd(1), "the rest and the trailers");
    const data = Buffer.concat(conn.of(1).flatMap((f) => (f.type === DATA ? [f.payload] : [])));
    expect(data).toEqual(message);
    const last = conn.of(1).at(-1);
    expect(last?.type).toBe(HEADERS);
    expect(headerLists(conn.of(1))[1]?.["grpc-status"]).toBe("0");
  });

  it("splits a response larger than SETTINGS_MAX_FRAME_SIZE into frames no larger than it", async () => {
    conn.open(settings([[4, 1 << 20]]));
    conn.send(frame(WINDOW_UPDATE, 0, 0, u32(1 << 20)));
    const message = grpcFrame(Buffer.alloc(40_000, 3));
    conn.send(frame(HEADERS, 0x4, 1, requestBlock()));
    for (let off = 0; off < message.length; off += 16_384)
      conn.send(frame(DATA, off + 16_384 >= message.length ? 1 : 0, 1, message.subarray(off, off + 16_384)));
    await conn.until(hasEnd(1), "the answer");
    const data = conn.of(1).filter((f) => f.type === DATA);
    expect(data.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...data.map((f) => f.payload.length))).toBeLessThanOrEqual(16_384);
    expect(Buffer.concat(data.map((f) => f.payload))).toEqual(message);
  });

  it("reads a request larger than the stream window, sending WINDOW_UPDATEs as it goes", async () => {
    const session = await rawSession(port);
    const big = grpcFrame(Buffer.alloc(300_000, 5));
    const reply = await rawCall(session, { chunks: [big] });
    session.destroy();
    expect(reply.grpcStatus).toBe(0);
    expect(reply.body).toEqual(big);
  });

  it("cancels a call the client resets", async () => {
    const { slow, release } = heldServer();
    const c = new RawConnection((await slow.listen("127.0.0.1", 0)).port);
    c.open();
    c.send(frame(HEADERS, 0x4, 1, requestBlock()), frame(DATA, 0x1, 1, grpcFrame(Buffer.from("x"))));
    for (let i = 0; i < 200 && slow.inFlight() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(slow.inFlight()).toBe(1);
    c.send(frame(RST_STREAM, 0, 1, u32(8)));
    for (let i = 0; i < 200 && slow.inFlight() === 1; i++) await new Promise((r) => setTimeout(r, 5));
    expect(slow.inFlight()).toBe(0);
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(c.of(1).some((f) => f.type === DATA)).toBe(false);
    c.close();
    await slow.close();
  });

  it.each([
    ["DATA on stream 0", () => frame(DATA, 0, 0, Buffer.from("x")), 1],
    ["a HEADERS on an even stream id", () => frame(HEADERS, 0x4, 2, requestBlock()), 1],
    ["a header block with HPACK index 0", () => frame(HEADERS, 0x5, 1, Buffer.from([0x80])), 9],
    ["a frame larger than 16384 bytes", () => frame(DATA, 0, 1, Buffer.alloc(16_385)), 6],
    ["a WINDOW_UPDATE of 0 on the connection", () => frame(WINDOW_UPDATE, 0, 0, u32(0)), 1],
    ["PUSH_PROMISE from a client", () => frame(5, 0x4, 1, Buffer.alloc(4)), 1],
    ["CONTINUATION without HEADERS", () => frame(CONTINUATION, 0x4, 1, Buffer.from([0x82])), 1],
  ] as const)("ends the connection with GOAWAY on %s", async (_what, bad, code) => {
    conn.open();
    conn.send(bad());
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(code);
    expect(errors.length).toBeGreaterThan(0);
    // The server keeps serving others.
    const session = await rawSession(port);
    expect((await rawCall(session, { chunks: [grpcFrame(Buffer.from("ok"))] })).grpcStatus).toBe(0);
    session.destroy();
  });

  it("refuses a connection whose first frame is not SETTINGS", async () => {
    conn.send(PREFACE, frame(PING, 0, 0, Buffer.alloc(8)));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(1);
  });

  it("refuses new streams after GOAWAY (drain) and still answers the open one", async () => {
    const { slow, release } = heldServer();
    const c = new RawConnection((await slow.listen("127.0.0.1", 0)).port);
    c.open();
    c.send(frame(HEADERS, 0x4, 1, requestBlock()), frame(DATA, 0x1, 1, grpcFrame(Buffer.from("x"))));
    for (let i = 0; i < 200 && slow.inFlight() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const drained = slow.drain(5000);
    await c.until(goaway, "GOAWAY");
    expect(c.frames.find((f) => f.type === GOAWAY)?.payload.readUInt32BE(0)).toBe(1); // last stream id
    c.send(frame(HEADERS, 0x5, 3, requestBlock()));
    await c.until((fs) => fs.some((f) => f.type === RST_STREAM && f.id === 3), "RST_STREAM on 3");
    expect(c.frames.find((f) => f.type === RST_STREAM && f.id === 3)?.payload.readUInt32BE(0)).toBe(7);
    release();
    await c.until(hasEnd(1), "the answer on stream 1");
    await drained;
    c.close();
  });

  it("announces SETTINGS_MAX_CONCURRENT_STREAMS and starts its next block with a table size update after the client shrinks its HPACK table", async () => {
    conn.open(settings([[1, 0]])); // SETTINGS_HEADER_TABLE_SIZE 0
    conn.send(frame(HEADERS, 0x4, 1, requestBlock()), frame(DATA, 0x1, 1, grpcFrame(Buffer.from("a"))));
    await conn.until(hasEnd(1), "the answer");
    const ours = conn.frames[0];
    expect(ours?.payload.readUInt16BE(0)).toBe(3);
    expect(ours?.payload.readUInt32BE(2)).toBe(1000);
    const blocks = conn.of(1).filter((f) => f.type === HEADERS);
    expect(blocks[0]?.payload[0]).toBe(0x20); // size update to 0, then :status 200
    expect(blocks[0]?.payload[1]).toBe(0x88);
    expect(blocks[1]?.payload[0]).not.toBe(0x20); // once
    expect(headerLists(conn.of(1))[1]?.["grpc-status"]).toBe("0");
  });

  it("serves a node:http2 client whose HPACK table is 0 bytes", async () => {
    const { connect: h2connect } = await import("node:http2");
    const session = h2connect(`http://127.0.0.1:${port}`, { settings: { headerTableSize: 0 } });
    await new Promise((resolve) => session.once("connect", resolve));
    const replies = [];
    for (let i = 0; i < 3; i++)
      replies.push(await rawCall(session, { chunks: [grpcFrame(Buffer.from("z"))] }));
    session.destroy();
    expect(replies.map((r) => r.grpcStatus)).toEqual([0, 0, 0]);
  });

  it("ends a connection sending a header block in more than 64 frames (empty CONTINUATION flood)", async () => {
    conn.open();
    const flood = [frame(HEADERS, 0, 1, requestBlock().subarray(0, 4))];
    for (let i = 0; i < 100; i++) flood.push(frame(CONTINUATION, 0, 1));
    conn.send(...flood);
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(0xb);
  });

  it("ignores trailers arriving on a stream it already answered and keeps the connection", async () => {
    conn.open();
    const wrongType = Buffer.from([
      ...literalField(":method", "POST"),
      ...literalField(":scheme", "http"),
      ...literalField(":path", "/test.Echo/Say"),
      ...literalField("content-type", "text/plain"),
    ]);
    conn.send(frame(HEADERS, 0x4, 1, wrongType));
    await conn.until(hasEnd(1), "the 415");
    conn.send(
      frame(HEADERS, 0x4 | 0x1, 1, Buffer.from(literalField("x-trailer", "late"))),
      frame(HEADERS, 0x4, 3, requestBlock()),
      frame(DATA, 0x1, 3, grpcFrame(Buffer.from("b"))),
    );
    await conn.until(hasEnd(3), "the answer on stream 3");
    expect(headerLists(conn.of(1))[0]?.[":status"]).toBe("415");
    expect(conn.frames.some((f) => f.type === GOAWAY)).toBe(false);
  });

  it("resumes only the stream a WINDOW_UPDATE names", async () => {
    conn.open(settings([[4, 10]]));
    const message = grpcFrame(Buffer.alloc(50, 1));
    conn.send(
      frame(HEADERS, 0x4, 1, requestBlock()),
      frame(DATA, 0x1, 1, message),
      frame(HEADERS, 0x4, 3, requestBlock()),
      frame(DATA, 0x1, 3, message),
    );
    await conn.until((fs) => fs.filter((f) => f.type === DATA).length >= 2, "the first DATA of both");
    conn.send(frame(WINDOW_UPDATE, 0, 3, u32(1000)));
    await conn.until(hasEnd(3), "stream 3 finished");
    await new Promise((r) => setTimeout(r, 30));
    expect(hasEnd(1)(conn.frames)).toBe(false);
    conn.send(frame(WINDOW_UPDATE, 0, 1, u32(1000)));
    await conn.until(hasEnd(1), "stream 1 finished");
  });

  it("resets a stream sent a PRIORITY of the wrong size and never answers it; PRIORITY on stream 0 ends the connection", async () => {
    const { slow, release } = heldServer();
    const c = new RawConnection((await slow.listen("127.0.0.1", 0)).port);
    c.open();
    c.send(frame(HEADERS, 0x4, 1, requestBlock()), frame(DATA, 0x1, 1, grpcFrame(Buffer.from("p"))));
    for (let i = 0; i < 200 && slow.inFlight() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    c.send(frame(PRIORITY, 0, 1, Buffer.alloc(4)));
    await c.until((fs) => fs.some((f) => f.type === RST_STREAM && f.id === 1), "RST_STREAM");
    expect(c.frames.find((f) => f.type === RST_STREAM)?.payload.readUInt32BE(0)).toBe(6);
    release();
    await new Promise((r) => setTimeout(r, 30));
    expect(c.of(1).some((f) => f.type === HEADERS || f.type === DATA)).toBe(false);
    c.send(frame(PRIORITY, 0, 0, Buffer.alloc(5)));
    await c.until(goaway, "GOAWAY");
    expect(goawayCode(c)).toBe(1);
    c.close();
    await slow.close();
  });

  it.each([
    ["an upper-case field name", [["X-Tenant", "a"]]],
    ["a connection-specific field", [["connection", "keep-alive"]]],
    ["te other than trailers", [["te", "gzip"]]],
    [
      "a pseudo-header after a regular field",
      [
        ["x-a", "1"],
        [":path", "/x"],
      ],
    ],
    ["an unknown pseudo-header", [[":protocol", "websocket"]]],
  ] as const)("resets a request with %s (PROTOCOL_ERROR) and keeps the connection", async (_what, extra) => {
    conn.open();
    const block = Buffer.concat([requestBlock(), Buffer.from(extra.flatMap(([n, v]) => literalField(n, v)))]);
    conn.send(frame(HEADERS, 0x4 | 0x1, 1, block));
    await conn.until((fs) => fs.some((f) => f.type === RST_STREAM && f.id === 1), "RST_STREAM");
    expect(conn.frames.find((f) => f.type === RST_STREAM)?.payload.readUInt32BE(0)).toBe(1);
    conn.send(frame(HEADERS, 0x4, 3, requestBlock()), frame(DATA, 0x1, 3, grpcFrame(Buffer.from("c"))));
    await conn.until(hasEnd(3), "the answer on stream 3");
    expect(conn.frames.some((f) => f.type === GOAWAY)).toBe(false);
  });

  it("hands a field named like an Object.prototype member through as sent", async () => {
    conn.open();
    conn.send(
      frame(HEADERS, 0x4, 1, requestBlock("/test.Echo/Say", [["constructor", "x"]])),
      frame(DATA, 0x1, 1, grpcFrame(Buffer.from("d"))),
    );
    await conn.until(hasEnd(1), "the answer");
    expect(seenHeaders?.constructor).toBe("x");
  });

  it.each([
    ["a PADDED DATA frame without its pad length", () => frame(DATA, 0x8, 1), 1],
    ["SETTINGS_ENABLE_PUSH 7", () => settings([[2, 7]]), 1],
    ["a GOAWAY shorter than 8 bytes", () => frame(GOAWAY, 0, 0, Buffer.alloc(4)), 6],
  ] as const)("ends the connection on %s", async (_what, bad, code) => {
    conn.open();
    conn.send(frame(HEADERS, 0x4, 1, requestBlock()), bad());
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(code);
  });

  it("does not count PINGs as activity: a connection carrying only PINGs is closed as idle", async () => {
    const idle = createGrpcServer({
      methods: [echo],
      maxMessageBytes: 1024,
      transport: "tollgate",
      idleTimeoutMs: 100,
    });
    const c = new RawConnection((await idle.listen("127.0.0.1", 0)).port);
    c.open();
    const until = Date.now() + 1500;
    while (!c.frames.some((f) => f.type === GOAWAY) && Date.now() < until) {
      c.send(frame(PING, 0, 0, Buffer.alloc(8)));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(goawayCode(c)).toBe(0);
    c.close();
    await idle.close();
  });
});
