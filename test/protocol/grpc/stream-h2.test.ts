/**
 * Streaming calls on the own HTTP/2 transport, frame by frame: responses sent within the peer's stream
 * and connection windows (a reader that stops granting window pauses them, WINDOW_UPDATE resumes them
 * in order), the bound on parked response bytes (the stream ends RESOURCE_EXHAUSTED, the connection
 * lives), and the request-arrival deadline (a stream that never completes its first message is reset,
 * one that did is long-lived), and client resets of open streams counted in the reset budget. The
 * generic streaming tests (both transports) are in stream.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createGrpcServer, type GrpcServer, type StreamMethod } from "../../../src/protocol/grpc/server.js";
import { Status } from "../../../src/protocol/grpc/status.js";
import { INITIAL_WINDOW_SIZE } from "../../../src/protocol/h2/frames.js";
import type { H2Limits } from "../../../src/protocol/h2/limits.js";
import {
  DATA,
  END_HEADERS,
  END_STREAM,
  type Frame,
  GOAWAY,
  HEADERS,
  frame as h2frame,
  headerLists,
  RawConnection,
  RST_STREAM,
  requestBlock,
  settings,
  u32,
  WINDOW_UPDATE,
} from "../h2/raw-h2.js";
import { grpcFrame } from "./raw-client.js";

/** Each message is a decimal size n: the answer is n bytes of "a". */
const blast: StreamMethod<number, number> = {
  path: "/test.Blast/Stream",
  decode: (bytes) => Number(Buffer.from(bytes).toString("utf8")),
  encode: (n) => Buffer.alloc(n, 97),
  open: (ctx) => ({
    message: (n) => {
      ctx.send(n);
    },
    halfClosed: () => ctx.end(Status.OK),
    closed: () => {},
  }),
};

let server: GrpcServer | undefined;
let conn: RawConnection | undefined;
afterEach(async () => {
  conn?.close();
  await server?.close();
  server = undefined;
});

async function start(
  opts: { maxStreamBufferedBytes?: number; limits?: Partial<H2Limits> } = {},
): Promise<RawConnection> {
  server = createGrpcServer({ methods: [], streamMethods: [blast], maxMessageBytes: 64, ...opts });
  const { port } = await server.listen("127.0.0.1", 0);
  conn = new RawConnection(port);
  return conn;
}

/** HEADERS opening a Blast stream on `id` (no END_STREAM). */
const openStream = (id: number) => h2frame(HEADERS, END_HEADERS, id, requestBlock(blast.path));
/** DATA with the message asking for `n` bytes. */
const ask = (id: number, n: number, end = false) =>
  h2frame(DATA, end ? END_STREAM : 0, id, grpcFrame(Buffer.from(String(n))));
const dataBytes = (fs: readonly Frame[], id: number) =>
  fs.filter((f) => f.id === id && f.type === DATA).reduce((sum, f) => sum + f.payload.length, 0);
const body = (fs: readonly Frame[], id: number) =>
  Buffer.concat(fs.filter((f) => f.id === id && f.type === DATA).map((f) => f.payload));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answer = (n: number) => grpcFrame(Buffer.alloc(n, 97));
const trailersOf = (c: RawConnection, id: number) => headerLists(c.of(id)).at(-1) ?? {};

describe("streaming calls on the own transport: flow control", () => {
  it("pauses responses at the stream window and resumes them in order on WINDOW_UPDATE", async () => {
    const c = await start();
    c.open(settings([[INITIAL_WINDOW_SIZE, 10]]));
    c.send(openStream(1), ask(1, 3), ask(1, 4), ask(1, 5));
    await c.until((fs) => dataBytes(fs, 1) === 10, "the first 10 bytes");
    await sleep(150);
    expect(dataBytes(c.frames, 1)).toBe(10); // the reader stopped granting window: nothing more
    expect(server?.openStreams()).toBe(1);
    c.send(h2frame(WINDOW_UPDATE, 0, 1, u32(100)));
    const all = Buffer.concat([answer(3), answer(4), answer(5)]);
    await c.until((fs) => dataBytes(fs, 1) === all.length, "the rest after WINDOW_UPDATE");
    expect(body(c.frames, 1)).toEqual(all);
    // Window left: a new message is answered at once; the client's END_STREAM ends the call OK.
    c.send(ask(1, 2, true));
    await c.until(
      (fs) => fs.some((f) => f.id === 1 && f.type === HEADERS && (f.flags & END_STREAM) !== 0),
      "trailers",
    );
    expect(body(c.frames, 1)).toEqual(Buffer.concat([all, answer(2)]));
    expect(trailersOf(c, 1)["grpc-status"]).toBe("0");
  });

  it("pauses at the connection window and resumes on a connection WINDOW_UPDATE", async () => {
    const c = await start({ maxStreamBufferedBytes: 1 << 20 });
    c.open(settings([[INITIAL_WINDOW_SIZE, 1 << 20]]));
    c.send(openStream(1), ask(1, 40_000), ask(1, 40_000));
    await c.until((fs) => dataBytes(fs, 1) === 65_535, "a connection window of DATA");
    await sleep(150);
    expect(dataBytes(c.frames, 1)).toBe(65_535);
    c.send(h2frame(WINDOW_UPDATE, 0, 0, u32(1 << 20)));
    await c.until((fs) => dataBytes(fs, 1) === 2 * 40_005, "the rest");
    expect(body(c.frames, 1)).toEqual(Buffer.concat([answer(40_000), answer(40_000)]));
  });

  it("ends a stream whose parked responses pass the bound RESOURCE_EXHAUSTED; the connection lives", async () => {
    const c = await start({ maxStreamBufferedBytes: 100 });
    c.open(settings([[INITIAL_WINDOW_SIZE, 0]]));
    c.send(openStream(1), ask(1, 40), ask(1, 40), ask(1, 40));
    await c.until(() => server?.openStreams() === 0, "the call ended");
    // Its trailers wait behind the parked responses, which go once the reader reads again.
    c.send(h2frame(WINDOW_UPDATE, 0, 1, u32(1000)));
    await c.until((fs) => headerLists(fs.filter((f) => f.id === 1)).length === 2, "trailers");
    expect(body(c.frames, 1)).toEqual(Buffer.concat([answer(40), answer(40)]));
    expect(trailersOf(c, 1)["grpc-status"]).toBe(String(Status.RESOURCE_EXHAUSTED));
    expect(trailersOf(c, 1)["grpc-message"]).toMatch(/not reading/);
    expect(c.frames.some((f) => f.type === GOAWAY)).toBe(false);
  });

  it("ends the stream, not the connection, when the connection's unsent budget would be passed", async () => {
    const c = await start({ maxStreamBufferedBytes: 1 << 20, limits: { maxUnsentBytes: 200 } });
    c.open(settings([[INITIAL_WINDOW_SIZE, 0]]));
    c.send(openStream(1), ask(1, 120), openStream(3), ask(3, 120));
    await c.until(() => server?.openStreams() === 1, "one call ended");
    await sleep(100);
    expect(c.frames.some((f) => f.type === GOAWAY)).toBe(false);
    c.send(h2frame(WINDOW_UPDATE, 0, 1, u32(1000)), h2frame(WINDOW_UPDATE, 0, 3, u32(1000)));
    await c.until((fs) => dataBytes(fs, 1) === 125, "the first stream's answer");
    expect(headerLists(c.of(3)).at(-1)?.["grpc-status"]).toBe(String(Status.RESOURCE_EXHAUSTED));
    expect(server?.openStreams()).toBe(1);
  });
});

describe("streaming calls on the own transport: deadlines and resets", () => {
  it("resets a stream that never completes its first message; one that did outlives the deadline", async () => {
    const c = await start({ limits: { requestTimeoutMs: 200 } });
    c.open();
    c.send(openStream(1), openStream(3), ask(3, 1));
    await c.until(
      (fs) => fs.some((f) => f.id === 1 && f.type === RST_STREAM),
      "a reset of the silent stream",
    );
    expect(
      c
        .of(1)
        .find((f) => f.type === RST_STREAM)
        ?.payload.readUInt32BE(0),
    ).toBe(0x8);
    await sleep(600); // three deadlines
    expect(c.of(3).some((f) => f.type === RST_STREAM)).toBe(false);
    c.send(ask(3, 2));
    await c.until((fs) => dataBytes(fs, 3) === 6 + 7, "an answer on the long-lived stream");
    expect(server?.openStreams()).toBe(1);
  });

  it("closes the call on the client's RST_STREAM", async () => {
    const c = await start();
    c.open();
    c.send(openStream(1), ask(1, 1));
    await c.until((fs) => dataBytes(fs, 1) === 6, "an answer");
    expect(server?.openStreams()).toBe(1);
    c.send(h2frame(RST_STREAM, 0, 1, u32(0x8)));
    await c.until(() => server?.openStreams() === 0, "the call closed");
  });
});

describe("streaming calls on the own transport: the reset budget", () => {
  it("counts client resets of open streaming answers: past the budget, GOAWAY ENHANCE_YOUR_CALM", async () => {
    const c = await start({ limits: { resetBurst: 2, resetRate: 0.001 } });
    c.open();
    for (const id of [1, 3, 5]) c.send(openStream(id), ask(id, 1));
    await c.until((fs) => [1, 3, 5].every((id) => dataBytes(fs, id) === 6), "three answers");
    c.send(...[1, 3, 5].map((id) => h2frame(RST_STREAM, 0, id, u32(0x8))));
    await c.until((fs) => fs.some((f) => f.type === GOAWAY), "GOAWAY");
    expect(c.frames.find((f) => f.type === GOAWAY)?.payload.readUInt32BE(4)).toBe(0xb);
  });
});
