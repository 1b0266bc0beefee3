/**
 * RFC 9113 conformance of the own HTTP/2 transport at the frame level, one test per case h2spec used
 * to fail (its test ids in the names): frames on streams that are not open (§5.1, §6.4), stream ids
 * (§5.1.1), PRIORITY (§5.3.1, §6.3), malformed requests (§8.1), and what follows an early answer.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGrpcServer, type GrpcServer, type UnaryMethod } from "../../../src/protocol/grpc/server.js";
import { grpcFrame } from "../grpc/raw-client.js";
import {
  headerBlock as block,
  DATA,
  END_HEADERS,
  END_STREAM,
  type Frame,
  frame,
  GOAWAY,
  goaway,
  goawayCode,
  HEADERS,
  hasEnd,
  headerLists,
  PADDED,
  PRIORITY,
  RawConnection,
  RST_STREAM,
  requestBlock,
  u32,
  WINDOW_UPDATE,
} from "./raw-h2.js";

const PRIORITY_FLAG = 0x20;
const NO_ERROR = 0;
const PROTOCOL_ERROR = 1;
const FLOW_CONTROL_ERROR = 3;
const STREAM_CLOSED = 5;
const FRAME_SIZE_ERROR = 6;

const echo: UnaryMethod<Uint8Array, Uint8Array> = {
  path: "/test.Echo/Say",
  decode: (bytes) => bytes,
  encode: (out) => out,
  handle: (input) => input,
};

/** h2spec's request: a GET of / (not gRPC: answered 415 at once, before the client ends). */
function getBlock(extra: readonly [string, string][] = []): Buffer {
  const fields: [string, string][] = [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", "/"],
    [":authority", "localhost"],
    ...extra,
  ];
  return block(fields);
}

const resets = (c: RawConnection, id: number): number[] =>
  c.frames.filter((f) => f.type === RST_STREAM && f.id === id).map((f) => f.payload.readUInt32BE(0));
const rst = (id: number) => (fs: readonly Frame[]) => fs.some((f) => f.type === RST_STREAM && f.id === id);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: GrpcServer;
let conn: RawConnection;
let port: number;
let errors: unknown[];
let release: () => void;

/** A server whose echo waits for `release()` when `held`, so a stream can sit half-closed (remote). */
async function start(held: boolean): Promise<void> {
  const waiting: (() => void)[] = [];
  release = () => {
    for (const f of waiting.splice(0)) f();
  };
  server = createGrpcServer({
    methods: [
      held
        ? { ...echo, handle: (input) => new Promise<Uint8Array>((r) => waiting.push(() => r(input))) }
        : echo,
    ],
    maxMessageBytes: 1 << 20,
    transport: "tollgate",
    onError: (err) => errors.push(err),
  });
  port = (await server.listen("127.0.0.1", 0)).port;
  conn = new RawConnection(port);
  conn.open();
}

/** The connection still serves: a call on `id` is answered and no GOAWAY came. */
async function stillServes(id: number): Promise<void> {
  conn.send(
    frame(HEADERS, END_HEADERS, id, requestBlock()),
    frame(DATA, END_STREAM, id, grpcFrame(Buffer.from("k"))),
  );
  await conn.until(hasEnd(id), `the answer on stream ${id}`);
  expect(headerLists(conn.of(id)).at(-1)?.["grpc-status"]).toBe("0");
  expect(conn.frames.some((f) => f.type === GOAWAY)).toBe(false);
}

beforeEach(() => {
  errors = [];
});

afterEach(async () => {
  release();
  conn.close();
  await server.close();
});

describe("frames on streams that are not open (RFC 9113 §5.1)", () => {
  it("half-closed (remote): DATA or HEADERS after the request's END_STREAM is a stream error STREAM_CLOSED (h2spec 5.1/5, 5.1/6)", async () => {
    await start(true);
    conn.send(
      frame(HEADERS, END_HEADERS, 1, requestBlock()),
      frame(DATA, END_STREAM, 1, grpcFrame(Buffer.from("a"))),
    );
    for (let i = 0; i < 200 && server.inFlight() === 0; i++) await pause(5);
    conn.send(frame(DATA, END_STREAM, 1, Buffer.from("late")));
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([STREAM_CLOSED]);
    conn.send(
      frame(HEADERS, END_HEADERS, 3, requestBlock()),
      frame(DATA, END_STREAM, 3, grpcFrame(Buffer.from("b"))),
    );
    for (let i = 0; i < 200 && server.inFlight() < 1; i++) await pause(5);
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, block([["x-late", "1"]])));
    await conn.until(rst(3), "RST_STREAM on 3");
    expect(resets(conn, 3)).toEqual([STREAM_CLOSED]);
    expect(conn.frames.some((f) => f.type === GOAWAY)).toBe(false);
  });

  it.each([
    ["DATA", () => frame(DATA, END_STREAM, 1, Buffer.from("test"))],
    ["HEADERS", () => frame(HEADERS, END_HEADERS | END_STREAM, 1, requestBlock())],
  ] as const)("closed by both END_STREAMs: %s on it is a connection error STREAM_CLOSED (h2spec 5.1/11, 5.1/12, 6.1/2)", async (_what, late) => {
    await start(false);
    conn.send(
      frame(HEADERS, END_HEADERS, 1, requestBlock()),
      frame(DATA, END_STREAM, 1, grpcFrame(Buffer.from("a"))),
    );
    await conn.until(hasEnd(1), "the answer");
    conn.send(late());
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(STREAM_CLOSED);
    expect(resets(conn, 1)).toEqual([]);
  });

  it.each([
    ["DATA", () => frame(DATA, END_STREAM, 1, Buffer.from("test"))],
    ["HEADERS", () => frame(HEADERS, END_HEADERS | END_STREAM, 1, requestBlock())],
  ] as const)("reset by the client: %s on it is a stream error STREAM_CLOSED, once (h2spec 5.1/8, 5.1/9)", async (_what, late) => {
    await start(false);
    conn.send(frame(HEADERS, END_HEADERS, 1, requestBlock()), frame(RST_STREAM, 0, 1, u32(8)), late());
    await conn.until(rst(1), "RST_STREAM on 1");
    conn.send(late()); // we reset it now: ignored
    await stillServes(3);
    expect(resets(conn, 1)).toEqual([STREAM_CLOSED]);
  });

  it("reset by us: whatever the client still sends on it is ignored (§5.1) and the connection goes on", async () => {
    await start(false);
    // A malformed request (no :scheme) that is still sending: RST_STREAM PROTOCOL_ERROR.
    conn.send(
      frame(
        HEADERS,
        END_HEADERS,
        1,
        block([
          [":method", "POST"],
          [":path", "/test.Echo/Say"],
        ]),
      ),
    );
    await conn.until(rst(1), "RST_STREAM on 1");
    conn.send(
      frame(DATA, 0, 1, Buffer.from("in flight")),
      frame(WINDOW_UPDATE, 0, 1, u32(10)),
      frame(HEADERS, END_HEADERS | END_STREAM, 1, block([["x-trailer", "1"]])),
      frame(RST_STREAM, 0, 1, u32(8)),
      frame(PRIORITY, 0, 1, Buffer.alloc(4)), // wrong size: would be a stream error, but we reset it
    );
    await stillServes(3);
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
  });

  it("a HEADERS on a lower stream id the client skipped is a connection error PROTOCOL_ERROR (h2spec 5.1.1/2)", async () => {
    await start(false);
    conn.send(
      frame(HEADERS, END_HEADERS, 5, requestBlock()),
      frame(DATA, END_STREAM, 5, grpcFrame(Buffer.from("a"))),
    );
    await conn.until(hasEnd(5), "the answer on 5");
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, requestBlock()));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(PROTOCOL_ERROR);
  });

  it("DATA, WINDOW_UPDATE or RST_STREAM on an even (server) stream id below the last opened is a connection error", async () => {
    await start(false);
    conn.send(
      frame(HEADERS, END_HEADERS, 5, requestBlock()),
      frame(DATA, END_STREAM, 5, grpcFrame(Buffer.from("a"))),
    );
    await conn.until(hasEnd(5), "the answer on 5");
    conn.send(frame(WINDOW_UPDATE, 0, 2, u32(1)));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(PROTOCOL_ERROR);
  });

  it("frames on a stream closed more than the record holds are ignored, those on a recent one are not", async () => {
    await start(false);
    // 1,025 calls: stream 1's slot in the 1,024-slot record goes to stream 2049.
    const calls: Buffer[] = [];
    for (let id = 1; id <= 2049; id += 2)
      calls.push(
        frame(HEADERS, END_HEADERS, id, requestBlock()),
        frame(DATA, END_STREAM, id, grpcFrame(Buffer.alloc(0))),
      );
    conn.send(...calls);
    await conn.until(hasEnd(2049), "the last answer");
    conn.send(frame(DATA, END_STREAM, 1, Buffer.from("very late")));
    await stillServes(2051);
    conn.send(frame(DATA, END_STREAM, 2049, Buffer.from("late")));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(STREAM_CLOSED);
  });
});

describe("PRIORITY (RFC 9113 §5.3.1, §6.3)", () => {
  it("a HEADERS whose priority depends on its own stream is reset PROTOCOL_ERROR (h2spec 5.3.1/1)", async () => {
    await start(false);
    const priority = Buffer.concat([u32(1), Buffer.from([255])]);
    conn.send(
      frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, Buffer.concat([priority, requestBlock()])),
    );
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
    expect(conn.of(1).some((f) => f.type === HEADERS)).toBe(false);
    await stillServes(3);
  });

  it("a PRIORITY frame depending on its own stream: stream error on a known stream, connection error on an idle one (h2spec 5.3.1/2)", async () => {
    await start(true);
    conn.send(
      frame(HEADERS, END_HEADERS, 1, requestBlock()),
      frame(DATA, END_STREAM, 1, grpcFrame(Buffer.from("a"))),
    );
    for (let i = 0; i < 200 && server.inFlight() === 0; i++) await pause(5);
    conn.send(frame(PRIORITY, 0, 1, Buffer.concat([u32(1), Buffer.from([16])])));
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
    expect(server.inFlight()).toBe(0); // the call was cancelled
    conn.send(frame(PRIORITY, 0, 3, Buffer.from([0, 0, 0, 0, 16]))); // a fine PRIORITY on an idle stream
    conn.send(frame(PRIORITY, 0, 7, Buffer.concat([u32(7), Buffer.from([16])])));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(PROTOCOL_ERROR);
    expect(resets(conn, 3)).toEqual([]);
  });

  it("a PRIORITY frame of the wrong length on a closed stream is reset FRAME_SIZE_ERROR (h2spec 6.3/2)", async () => {
    await start(false);
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, getBlock()));
    await conn.until(hasEnd(1), "the 415");
    conn.send(frame(PRIORITY, 0, 1, Buffer.from([0x80, 0, 0, 1])));
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([FRAME_SIZE_ERROR]);
    await stillServes(3);
  });
});

describe("malformed requests (RFC 9113 §8.1, §8.3)", () => {
  it.each([
    [
      "an empty :path (h2spec 8.1.2.3/1)",
      [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", ""],
      ],
    ],
    [
      "no :scheme (h2spec 8.1.2.3/3)",
      [
        [":method", "POST"],
        [":path", "/test.Echo/Say"],
      ],
    ],
    [
      "no :method",
      [
        [":scheme", "http"],
        [":path", "/test.Echo/Say"],
      ],
    ],
    [
      "a relative :path",
      [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", "test.Echo/Say"],
      ],
    ],
    [
      "a content-length that is not a number",
      [
        ...[
          [":method", "POST"],
          [":scheme", "http"],
          [":path", "/x"],
        ],
        ["content-length", "1e3"],
      ],
    ],
    [
      "content-length 5 on a request that ends in its HEADERS",
      [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", "/x"],
        ["content-length", "5"],
      ],
    ],
  ] as const)("resets a request with %s PROTOCOL_ERROR", async (_what, fields) => {
    await start(false);
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block(fields)));
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
    await stillServes(3);
  });

  it.each([
    ["one DATA longer (h2spec 8.1.2.6/1)", ["4"], [Buffer.from("test!")]],
    ["the sum of several DATA longer (h2spec 8.1.2.6/2)", ["8"], [Buffer.from("test"), Buffer.from("test!")]],
    ["DATA shorter", ["10"], [Buffer.from("test")]],
  ] as const)("resets a request whose content-length differs from its DATA: %s", async (_what, [
    length,
  ], chunks) => {
    await start(false);
    conn.send(frame(HEADERS, END_HEADERS, 1, requestBlock("/test.Echo/Say", [["content-length", length]])));
    conn.send(...chunks.map((c, i) => frame(DATA, i === chunks.length - 1 ? END_STREAM : 0, 1, c)));
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
    await stillServes(3);
  });

  it("answers a call whose content-length matches its DATA (padding not counted)", async () => {
    await start(false);
    const message = grpcFrame(Buffer.from("sized"));
    conn.send(
      frame(
        HEADERS,
        END_HEADERS,
        1,
        requestBlock("/test.Echo/Say", [["content-length", String(message.length)]]),
      ),
      frame(DATA, 0, 1, message.subarray(0, 3)),
      frame(
        DATA,
        END_STREAM | PADDED,
        1,
        Buffer.concat([Buffer.from([4]), message.subarray(3), Buffer.alloc(4)]),
      ),
    );
    await conn.until(hasEnd(1), "the answer");
    expect(headerLists(conn.of(1)).at(-1)?.["grpc-status"]).toBe("0");
    expect(resets(conn, 1)).toEqual([]);
  });

  it.each([
    ["a pseudo-header (h2spec 8.1.2.1/3)", [[":method", "POST"]]],
    ["an upper-case name", [["X-Trailer", "1"]]],
  ] as const)("resets a call whose trailers carry %s PROTOCOL_ERROR", async (_what, fields) => {
    await start(false);
    conn.send(
      frame(HEADERS, END_HEADERS, 1, requestBlock()),
      frame(DATA, 0, 1, grpcFrame(Buffer.from("t"))),
      frame(HEADERS, END_HEADERS | END_STREAM, 1, block(fields)),
    );
    await conn.until(rst(1), "RST_STREAM on 1");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
    expect(conn.of(1).some((f) => f.type === HEADERS)).toBe(false);
  });
});

describe("an answer sent before the client finished (half-closed local, RFC 9113 §8.1)", () => {
  /** Open stream 1 with h2spec's GET (no END_STREAM) and wait for the 415. */
  async function answeredEarly(): Promise<void> {
    await start(false);
    conn.send(frame(HEADERS, END_HEADERS, 1, getBlock()));
    await conn.until(hasEnd(1), "the 415");
    expect(headerLists(conn.of(1))[0]?.[":status"]).toBe("415");
  }

  it("keeps the stream: the client's END_STREAM closes it without any RST_STREAM; DATA after that ends the connection", async () => {
    await answeredEarly();
    conn.send(frame(DATA, 0, 1, Buffer.from("body")), frame(DATA, END_STREAM, 1, Buffer.from("end")));
    await stillServes(3);
    expect(resets(conn, 1)).toEqual([]);
    conn.send(frame(DATA, END_STREAM, 1, Buffer.from("more")));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(STREAM_CLOSED);
  });

  it("still checks its frames: WINDOW_UPDATE 0 (h2spec 6.9/2)", async () => {
    await answeredEarly();
    conn.send(frame(WINDOW_UPDATE, 0, 1, u32(0)));
    await conn.until(rst(1), "RST_STREAM");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
  });

  it("still checks its frames: a window past 2^31-1 (h2spec 6.9.1/3)", async () => {
    await answeredEarly();
    conn.send(frame(WINDOW_UPDATE, 0, 1, u32(0x7fffffff)), frame(WINDOW_UPDATE, 0, 1, u32(0x7fffffff)));
    await conn.until(rst(1), "RST_STREAM");
    expect(resets(conn, 1)).toEqual([FLOW_CONTROL_ERROR]);
  });

  it("still checks its frames: trailers without END_STREAM (h2spec 8.1/1)", async () => {
    await answeredEarly();
    conn.send(
      frame(DATA, 0, 1, Buffer.from("test")),
      frame(HEADERS, END_HEADERS, 1, block([["x-test", "ok"]])),
    );
    await conn.until(rst(1), "RST_STREAM");
    expect(resets(conn, 1)).toEqual([PROTOCOL_ERROR]);
  });

  it("still checks its frames: DATA padding longer than the frame ends the connection (h2spec 6.1/3)", async () => {
    await answeredEarly();
    conn.send(frame(DATA, PADDED | END_STREAM, 1, Buffer.from([6, 0x74, 0x65, 0x73, 0x74])));
    await conn.until(goaway, "GOAWAY");
    expect(goawayCode(conn)).toBe(PROTOCOL_ERROR);
  });

  it("asks a client still uploading to stop (RST_STREAM NO_ERROR) within half a window, and ignores what was in flight", async () => {
    await answeredEarly();
    for (let i = 0; i < 4; i++) conn.send(frame(DATA, 0, 1, Buffer.alloc(16_000)));
    await conn.until(rst(1), "RST_STREAM");
    conn.send(frame(DATA, END_STREAM, 1, Buffer.alloc(10)));
    await stillServes(3);
    expect(resets(conn, 1)).toEqual([NO_ERROR]);
    expect(conn.frames.some((f) => f.type === WINDOW_UPDATE && f.id === 1)).toBe(false);
  });

  it("stops it (RST_STREAM NO_ERROR) when the server drains, and then ends the connection", async () => {
    await answeredEarly();
    const drained = server.drain(2000);
    await conn.until(rst(1), "RST_STREAM");
    expect(resets(conn, 1)).toEqual([NO_ERROR]);
    await drained;
    await conn.until(() => conn.closed, "the connection to end");
  });
});
