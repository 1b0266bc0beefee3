/** The gRPC server's transport over node:http2 (`--grpc-transport node`). */
import {
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type {
  AcceptedCall,
  AcceptStream,
  Connection,
  StreamWire,
  TlsOptions,
  TransportHooks,
} from "./transport.js";

const REJECT_HEADERS = Object.freeze({ ":status": 415, "content-type": "text/plain" });

const OK_HEADERS = Object.freeze({ ":status": 200, "content-type": "application/grpc" });
const OK_OPTIONS = Object.freeze({ waitForTrailers: true });
const OK_TRAILERS = Object.freeze({ "grpc-status": "0" });
const END_STREAM = Object.freeze({ endStream: true });

function sendOkTrailers(this: ServerHttp2Stream): void {
  try {
    this.sendTrailers(OK_TRAILERS);
  } catch {
    this.destroy();
  }
}

/** A node:http2 stream as a CallStream. */
class NodeCallStream implements AcceptStream {
  constructor(readonly stream: ServerHttp2Stream) {}
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get peer(): string | undefined {
    return this.stream.session?.socket?.remoteAddress;
  }
  respondOk(framed: Buffer): void {
    const stream = this.stream;
    stream.respond(OK_HEADERS, OK_OPTIONS);
    stream.on("wantTrailers", sendOkTrailers);
    stream.end(framed);
  }
  respondTrailersOnly(fields: readonly (readonly [string, string])[]): void {
    const headers: Record<string, string | number> = { ":status": 200, "content-type": "application/grpc" };
    for (const [name, value] of fields) headers[name] = value;
    try {
      this.stream.respond(headers, END_STREAM);
    } catch {
      // The session went away between the check and the write: nothing left to answer.
      this.stream.destroy();
    }
  }
  respondText(status: number, body: string): void {
    if (!this.stream.destroyed) this.stream.respond({ ...REJECT_HEADERS, ":status": status });
    this.stream.end(body);
  }
  destroy(): void {
    this.stream.destroy();
  }
  streamWire(): StreamWire {
    return new NodeStreamWire(this.stream);
  }
}

/** A long-lived response over a node:http2 stream: headers, messages, trailers. */
class NodeStreamWire implements StreamWire {
  #trailers: Record<string, string> | undefined;
  readonly connection: object;
  constructor(readonly stream: ServerHttp2Stream) {
    this.connection = stream.session ?? stream;
    stream.on("wantTrailers", () => {
      try {
        stream.sendTrailers(this.#trailers ?? OK_TRAILERS);
      } catch {
        stream.destroy();
      }
    });
  }
  get buffered(): number {
    return this.stream.writableLength;
  }
  get room(): number {
    return Number.POSITIVE_INFINITY;
  }
  consumed(): void {} // node:http2 reopens the window as it reads
  open(): void {
    const s = this.stream;
    if (!s.headersSent && !s.destroyed) s.respond(OK_HEADERS, OK_OPTIONS);
  }
  write(framed: Buffer): boolean {
    this.open();
    return this.stream.destroyed ? false : this.stream.write(framed);
  }
  finish(fields: readonly (readonly [string, string])[]): void {
    const s = this.stream;
    if (s.destroyed) return;
    const trailers: Record<string, string> = {};
    for (const [name, value] of fields) trailers[name] = value;
    try {
      if (!s.headersSent) {
        s.respond({ ":status": 200, "content-type": "application/grpc", ...trailers }, END_STREAM);
        return;
      }
      this.#trailers = trailers;
      s.end();
    } catch {
      s.destroy();
    }
  }
}

/** Symbol under which an accepted stream carries its call (lets listeners be shared functions). */
const CALL = Symbol("tollgate.call");

type NodeStream = ServerHttp2Stream & { [CALL]?: AcceptedCall };

function onCallData(this: NodeStream, chunk: Buffer): void {
  countActivity(this.session);
  this[CALL]?.push(chunk);
}
function onCallEnd(this: NodeStream): void {
  this[CALL]?.run();
}
function onCallClose(this: NodeStream): void {
  this[CALL]?.closed();
}

/** Activity count of a session: its streams and their data chunks, counted as they arrive. */
const ACTIVITY = Symbol("tollgate.activity");

type TrackedSession = Http2Session & { [ACTIVITY]?: number };

function countActivity(session: Http2Session | undefined): void {
  const s = session as TrackedSession | undefined;
  if (s) s[ACTIVITY] = (s[ACTIVITY] ?? 0) + 1;
}

function nodeConnection(session: Http2Session): Connection {
  return {
    activity: () => (session as TrackedSession)[ACTIVITY] ?? 0,
    get closed() {
      return session.closed;
    },
    close: () => session.close(),
    destroy: () => session.destroy(),
    onClose: (listener) => session.once("close", listener),
  };
}

/** An HTTP/2 server (h2c, or TLS when `tls` is set) whose streams go to `hooks.accept`. */
export function createNodeTransport(
  tls: TlsOptions | undefined,
  hooks: TransportHooks,
  maxConcurrentStreams?: number,
): Http2Server | Http2SecureServer {
  const onSessionError = (err: unknown) => hooks.onError(err, "session");
  const onStreamError = (err: unknown) => hooks.onError(err, "stream");
  const settings = maxConcurrentStreams === undefined ? {} : { settings: { maxConcurrentStreams } };
  const server = tls
    ? createSecureServer({
        cert: tls.cert,
        key: tls.key,
        allowHTTP1: false,
        ...settings,
        ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
      })
    : createServer(settings);
  server.on("session", (session: Http2Session) => {
    session.on("error", onSessionError);
    hooks.addConnection(nodeConnection(session));
  });
  server.on("sessionError", onSessionError);
  server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    countActivity(stream.session);
    stream.on("error", onStreamError);
    const call = hooks.accept(new NodeCallStream(stream), headers);
    if (call === undefined) {
      stream.resume(); // discard whatever the client still sends
      return;
    }
    const s = stream as NodeStream;
    s[CALL] = call;
    s.on("data", onCallData);
    // `on`, not `once`: each fires once per stream anyway, and `once` allocates a wrapper per call.
    s.on("end", onCallEnd);
    s.on("close", onCallClose);
  });
  return server;
}
