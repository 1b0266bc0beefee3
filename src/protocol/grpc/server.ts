/**
 * A lean unary-gRPC server: the transport seam of protocol/. It knows nothing of rate limiting: it
 * routes `:path` to a UnaryMethod and enforces the gRPC-over-HTTP/2 rules a gateway sidecar relies on
 * (content-type, `grpc-timeout`, message size, gzip, trailers-only errors, percent-encoded
 * `grpc-message`, an in-flight bound, GOAWAY on drain, idle connections closed). A bad peer never
 * crashes the process: connection and stream errors are reported to `onError` and only that peer is
 * cut.
 *
 * Two HTTP/2 implementations carry it, with the same behaviour (test/protocol/grpc runs on both):
 * tollgate's own (protocol/h2, the default: a request is a small record and a turn's answers leave in
 * one socket write) and node:http2 (a Duplex stream, header objects and several events per request;
 * the own one costs about a third of its CPU per call, bench/RESULTS.md "Own HTTP/2 transport").
 *
 * Why not @grpc/grpc-js: issue 2 measured it at ~55-60% of the raw node:http2 ceiling.
 */
import {
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from "node:net";
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from "node:tls";
import { H2Connection, type H2Stream } from "../h2/connection.js";
import { fieldsBlock, responseBlock } from "../h2/frames.js";
import {
  type CallHeaders,
  type CallHost,
  type CallStream,
  trailersOnly,
  UnaryCall,
  type UnaryMethod,
} from "./call.js";
import { Status } from "./status.js";
import { parseGrpcTimeout } from "./timeout.js";

export type { CallContext, UnaryMethod } from "./call.js";

/** TLS for the gRPC port. Without `clientCa` any client may connect; with it, mTLS is required. */
export interface TlsOptions {
  /** PEM certificate chain of the server. */
  readonly cert: string | Buffer;
  /** PEM private key of the server. */
  readonly key: string | Buffer;
  /** PEM CA bundle: when set, clients must present a certificate it signed (mTLS). */
  readonly clientCa?: string | Buffer;
}

/** Which HTTP/2 implementation serves the gRPC port. */
export type GrpcTransport = "tollgate" | "node";

export interface GrpcServerOptions {
  // biome-ignore lint/suspicious/noExplicitAny: methods of different message types share one list
  readonly methods: readonly UnaryMethod<any, any>[];
  /** Largest request message in bytes, compressed or after decompression. Larger → RESOURCE_EXHAUSTED. */
  readonly maxMessageBytes: number;
  /** Calls in flight past which a new one is answered RESOURCE_EXHAUSTED at once. @default Infinity */
  readonly maxInFlight?: number;
  /** Serve TLS instead of h2c. */
  readonly tls?: TlsOptions;
  /**
   * Close a connection after this many ms without any traffic: GOAWAY, then closed once its calls
   * finish (at once if it has none); 0 never. Without it a peer that vanished, or half-closed in the
   * middle of a frame, holds its connection (and file descriptor) forever; Envoy just reconnects.
   * @default 300000 (5 minutes)
   */
  readonly idleTimeoutMs?: number;
  /** Unexpected handler errors (answered INTERNAL) and peer session/stream errors. @default ignore */
  readonly onError?: (err: unknown, where: string) => void;
  /**
   * `tollgate`: the own HTTP/2 connection of protocol/h2 (default); `node`: node:http2. Same behaviour
   * (test/protocol/grpc runs its conformance tests on both); the own one costs a quarter to a third of the CPU per
   * call (bench/RESULTS.md).
   */
  readonly transport?: GrpcTransport;
  /** Call accounting for metrics (`tollgate_in_flight_requests`, `tollgate_rejected_requests_total`). */
  readonly events?: ServerEvents;
}

/** What the transport reports about calls; TollgateMetrics implements it. */
export interface ServerEvents {
  requestStarted(): void;
  requestFinished(): void;
  rejected(reason: "overload" | "invalid_argument" | "deadline"): void;
}

export interface GrpcServer {
  /** Listen on `host:port` (port 0 picks a free one); resolves to the bound address. */
  listen(host: string, port: number): Promise<AddressInfo>;
  /**
   * Stop accepting connections, send GOAWAY on every session, let calls in flight finish, and after
   * `timeoutMs` cut whatever is left. Resolves when every session is closed.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Close at once, cutting calls in flight. */
  close(): Promise<void>;
  /** Calls accepted and not yet answered. */
  inFlight(): number;
}

/** `application/grpc`, `application/grpc+proto`, optionally with parameters. */
const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const REJECT_HEADERS = Object.freeze({ ":status": 415, "content-type": "text/plain" });
const ACCEPT_ENCODING = Object.freeze({ "grpc-accept-encoding": "identity,gzip" });

/** A CallStream that can also answer plain HTTP (the 415 to a non-gRPC content-type). */
interface AcceptStream extends CallStream {
  respondText(status: number, body: string): void;
}

// ---- node:http2 ----

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
}

/** Symbol under which an accepted stream carries its call (lets listeners be shared functions). */
const CALL = Symbol("tollgate.call");

type NodeStream = ServerHttp2Stream & { [CALL]?: UnaryCall };

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

// ---- own HTTP/2 (protocol/h2) ----

const H2_OK_HEADERS = responseBlock(200, [["content-type", "application/grpc"]]);
const H2_OK_TRAILERS = fieldsBlock([["grpc-status", "0"]]);

/** An own-transport stream as a CallStream. */
class H2CallStream implements AcceptStream {
  constructor(readonly stream: H2Stream) {}
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get peer(): string | undefined {
    return this.stream.peer;
  }
  respondOk(framed: Buffer): void {
    this.stream.respond(H2_OK_HEADERS, framed, H2_OK_TRAILERS);
  }
  respondTrailersOnly(fields: readonly (readonly [string, string])[]): void {
    this.stream.respond(
      responseBlock(200, [["content-type", "application/grpc"], ...fields]),
      undefined,
      undefined,
    );
  }
  respondText(status: number, body: string): void {
    this.stream.respond(
      responseBlock(status, [["content-type", "text/plain"]]),
      Buffer.from(body, "utf8"),
      undefined,
    );
  }
  destroy(): void {
    this.stream.destroy();
  }
}

// ---- both ----

/** What the idle sweep and drain need of a connection, whichever transport carries it. */
interface Connection {
  /** Grows with the connection's traffic. */
  activity(): number;
  readonly closed: boolean;
  /** GOAWAY; ends once its calls finish. */
  close(): void;
  destroy(): void;
  onClose(listener: () => void): void;
  /** The idle sweep's last look: the activity count, and when it first saw that count. */
  seen?: { count: number; at: number };
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

function h2Connection(conn: H2Connection): Connection {
  return {
    activity: () => conn.activity,
    get closed() {
      return conn.closed;
    },
    close: () => conn.close(),
    destroy: () => conn.destroy(),
    onClose: (listener) => conn.onClose(listener),
  };
}

/**
 * Closes connections idle for `idleTimeoutMs`: no new stream and no request data in that time. A sweep
 * every quarter of the timeout compares each connection's activity count with the one it saw last, so
 * a connection is closed between 1 and 1.25 timeouts after its last traffic. (Node's own session
 * timeout re-arms a timer on every frame of every stream: 1.5-2% of the CPU per request in the bench
 * profile, for a timer that fires once every few minutes at most.) An idle connection gets GOAWAY
 * first and is destroyed one timeout later if it has not closed by then (a peer that stalled inside
 * a frame never finishes closing).
 */
function idleSweeper(connections: ReadonlySet<Connection>, idleTimeoutMs: number): NodeJS.Timeout {
  const sweep = () => {
    const now = performance.now();
    for (const c of connections) {
      const count = c.activity();
      const seen = c.seen;
      if (seen === undefined || seen.count !== count) c.seen = { count, at: now };
      else if (now - seen.at >= idleTimeoutMs) {
        seen.at = Number.POSITIVE_INFINITY; // once
        closeIdle(c, idleTimeoutMs);
      }
    }
  };
  const timer = setInterval(sweep, Math.max(1, idleTimeoutMs / 4));
  timer.unref();
  return timer;
}

function closeIdle(c: Connection, idleTimeoutMs: number): void {
  if (c.closed) {
    c.destroy();
    return;
  }
  c.close();
  const timer = setTimeout(() => c.destroy(), idleTimeoutMs);
  timer.unref();
  c.onClose(() => clearTimeout(timer));
}

/** Create (not yet listening) a unary gRPC server for `opts.methods`. */
export function createGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const methods = new Map<string, UnaryMethod>(opts.methods.map((m) => [m.path, m as UnaryMethod]));
  const maxInFlight = opts.maxInFlight ?? Number.POSITIVE_INFINITY;
  const onError = opts.onError ?? (() => {});
  const onSessionError = (err: unknown) => onError(err, "session");
  const onStreamError = (err: unknown) => onError(err, "stream");
  const connections = new Set<Connection>();
  let inFlight = 0;
  let draining = false;
  const events = opts.events;
  const host: CallHost = {
    maxMessageBytes: opts.maxMessageBytes,
    onError,
    callDone: () => {
      inFlight--;
      events?.requestFinished();
    },
    ...(events ? { rejected: (reason: "invalid_argument" | "deadline") => events.rejected(reason) } : {}),
  };

  /** Check a new stream's headers: its call, or undefined when it was answered (refused) already. */
  const accept = (stream: AcceptStream, headers: CallHeaders): UnaryCall | undefined => {
    const contentType = headers["content-type"];
    if (typeof contentType !== "string" || !GRPC_CONTENT_TYPE.test(contentType)) {
      // gRPC over HTTP/2: a non-gRPC content-type is answered at the HTTP layer (415).
      stream.respondText(
        415,
        `unsupported content-type ${JSON.stringify(contentType ?? "")}: expected application/grpc\n`,
      );
      return undefined;
    }
    const path = headers[":path"] ?? "";
    const method = typeof path === "string" ? methods.get(path) : undefined;
    if (method === undefined || headers[":method"] !== "POST") {
      trailersOnly(stream, Status.UNIMPLEMENTED, `unknown method ${headers[":method"] ?? ""} ${path}`);
      return undefined;
    }
    const encoding = headers["grpc-encoding"];
    const gzip = encoding === "gzip";
    if (!gzip && encoding !== undefined && encoding !== "identity") {
      trailersOnly(
        stream,
        Status.UNIMPLEMENTED,
        `unsupported grpc-encoding ${String(encoding)}`,
        ACCEPT_ENCODING,
      );
      return undefined;
    }
    const timeout = headers["grpc-timeout"];
    let timeoutMs: number | undefined;
    if (typeof timeout === "string") {
      timeoutMs = parseGrpcTimeout(timeout);
      if (timeoutMs === undefined) {
        trailersOnly(stream, Status.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeout)}`);
        return undefined;
      }
    }
    if (inFlight >= maxInFlight) {
      events?.rejected("overload");
      trailersOnly(stream, Status.RESOURCE_EXHAUSTED, `server overloaded: ${inFlight} calls in flight`);
      return undefined;
    }
    inFlight++;
    events?.requestStarted();
    return new UnaryCall(stream, headers, method, gzip, timeoutMs, host);
  };

  const addConnection = (c: Connection): void => {
    connections.add(c);
    c.onClose(() => connections.delete(c));
    if (draining) c.close();
  };

  let server: Http2Server | Http2SecureServer | NetServer | TlsServer;
  if ((opts.transport ?? "tollgate") === "tollgate") {
    const onStream = (s: H2Stream): void => {
      const call = accept(new H2CallStream(s), s.headers);
      if (call !== undefined) s.handler = call;
    };
    const h2Options = { onStream, onError };
    const startConnection = (socket: Socket): void => {
      socket.on("error", () => {}); // reported by the connection; a reset before that is no news
      addConnection(h2Connection(new H2Connection(socket, h2Options)));
    };
    if (opts.tls) {
      const tlsServer = createTlsServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        ALPNProtocols: ["h2"],
        allowHalfOpen: true,
        ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
      });
      tlsServer.on("secureConnection", (socket: TLSSocket) => {
        if (socket.alpnProtocol !== "h2") {
          onSessionError(new Error(`TLS client did not negotiate h2 (ALPN ${String(socket.alpnProtocol)})`));
          socket.destroy();
          return;
        }
        startConnection(socket);
      });
      tlsServer.on("tlsClientError", onSessionError);
      server = tlsServer;
    } else {
      server = createNetServer({ allowHalfOpen: true, noDelay: true }, startConnection);
    }
  } else {
    const http2Server = opts.tls
      ? createSecureServer({
          cert: opts.tls.cert,
          key: opts.tls.key,
          allowHTTP1: false,
          ...(opts.tls.clientCa
            ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true }
            : {}),
        })
      : createServer();
    http2Server.on("session", (session: Http2Session) => {
      session.on("error", onSessionError);
      addConnection(nodeConnection(session));
    });
    http2Server.on("sessionError", onSessionError);
    http2Server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      countActivity(stream.session);
      stream.on("error", onStreamError);
      const call = accept(new NodeCallStream(stream), headers);
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
    server = http2Server;
  }
  const idleTimeoutMs = opts.idleTimeoutMs ?? 300_000;
  const sweeper = idleTimeoutMs > 0 ? idleSweeper(connections, idleTimeoutMs) : undefined;

  const allClosed = (): Promise<void> =>
    Promise.all([...connections].map((c) => new Promise<void>((resolve) => c.onClose(resolve)))).then(
      () => {},
    );
  const serverClosed = (): Promise<void> =>
    new Promise((resolve) =>
      server.close(() => {
        clearInterval(sweeper);
        resolve();
      }),
    );

  return {
    listen: (hostname, port) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, hostname, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async drain(timeoutMs) {
      draining = true;
      const closed = serverClosed();
      const sessionsClosed = allClosed();
      // close(): GOAWAY now; the session ends by itself once its open streams finish.
      for (const c of connections) c.close();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([sessionsClosed, late]);
      clearTimeout(timer);
      for (const c of connections) c.destroy();
      await closed;
    },
    async close() {
      draining = true;
      const closed = serverClosed();
      for (const c of connections) c.destroy();
      await closed;
    },
    inFlight: () => inFlight,
  };
}
