/**
 * A lean unary-gRPC server on node:http2: the transport seam of protocol/. It knows nothing of rate
 * limiting: it routes `:path` to a UnaryMethod and enforces the gRPC-over-HTTP/2 rules a gateway
 * sidecar relies on (content-type, `grpc-timeout`, message size, gzip, trailers-only errors,
 * percent-encoded `grpc-message`, an in-flight bound, GOAWAY on drain). A bad peer never crashes the
 * process: session and stream errors are reported to `onError` and only that peer is cut.
 *
 * Why not @grpc/grpc-js: issue 2 measured it at ~55-60% of the raw node:http2 ceiling; this server
 * adds little to node:http2 itself (no per-call closures, pre-built headers, lazy AbortSignal).
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
import type { AddressInfo } from "node:net";
import { type CallHost, trailersOnly, UnaryCall, type UnaryMethod } from "./call.js";
import { Status, type StatusCode } from "./status.js";
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
/** Symbol under which an accepted stream carries its call (lets listeners be shared functions). */
const CALL = Symbol("tollgate.call");

type CallStream = ServerHttp2Stream & { [CALL]?: UnaryCall };

function onCallData(this: CallStream, chunk: Buffer): void {
  countActivity(this.session);
  this[CALL]?.push(chunk);
}
function onCallEnd(this: CallStream): void {
  this[CALL]?.run();
}
function onCallClose(this: CallStream): void {
  this[CALL]?.closed();
}

/** Answer trailers-only and discard whatever the client still sends. */
function refuse(
  stream: ServerHttp2Stream,
  code: StatusCode,
  message: string,
  extra?: Readonly<Record<string, string>>,
): void {
  trailersOnly(stream, code, message, extra);
  stream.resume();
}

/** Activity count of a session: its streams and their data chunks, counted as they arrive. */
const ACTIVITY = Symbol("tollgate.activity");
/** The activity count the idle sweep last saw on a session, and when it first saw that count. */
const SEEN = Symbol("tollgate.seen");

type TrackedSession = Http2Session & { [ACTIVITY]?: number; [SEEN]?: { count: number; at: number } };

/**
 * Closes connections idle for `idleTimeoutMs`: no new stream and no request data in that time. A sweep
 * every quarter of the timeout compares each session's activity count with the one it saw last, so a
 * connection is closed between 1 and 1.25 timeouts after its last traffic. (Node's own session
 * timeout re-arms a timer on every frame of every stream: 1.5-2% of the CPU per request in the bench
 * profile, for a timer that fires once every few minutes at most.) An idle connection gets GOAWAY
 * first and is destroyed one timeout later if it has not closed by then (a peer that stalled inside
 * a frame never finishes closing).
 */
function idleSweeper(sessions: ReadonlySet<Http2Session>, idleTimeoutMs: number): NodeJS.Timeout {
  const sweep = () => {
    const now = performance.now();
    for (const session of sessions as ReadonlySet<TrackedSession>) {
      const count = session[ACTIVITY] ?? 0;
      const seen = session[SEEN];
      if (seen === undefined || seen.count !== count) session[SEEN] = { count, at: now };
      else if (now - seen.at >= idleTimeoutMs) {
        seen.at = Number.POSITIVE_INFINITY; // once
        closeIdle(session, idleTimeoutMs);
      }
    }
  };
  const timer = setInterval(sweep, Math.max(1, idleTimeoutMs / 4));
  timer.unref();
  return timer;
}

function closeIdle(session: Http2Session, idleTimeoutMs: number): void {
  if (session.closed) {
    session.destroy();
    return;
  }
  session.close();
  const timer = setTimeout(() => session.destroy(), idleTimeoutMs);
  timer.unref();
  session.once("close", () => clearTimeout(timer));
}

function countActivity(session: Http2Session | undefined): void {
  const s = session as TrackedSession | undefined;
  if (s) s[ACTIVITY] = (s[ACTIVITY] ?? 0) + 1;
}

/** Create (not yet listening) a unary gRPC server for `opts.methods`. */
export function createGrpcServer(opts: GrpcServerOptions): GrpcServer {
  const methods = new Map<string, UnaryMethod>(opts.methods.map((m) => [m.path, m as UnaryMethod]));
  const maxInFlight = opts.maxInFlight ?? Number.POSITIVE_INFINITY;
  const onError = opts.onError ?? (() => {});
  const onSessionError = (err: unknown) => onError(err, "session");
  const onStreamError = (err: unknown) => onError(err, "stream");
  const sessions = new Set<Http2Session>();
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

  const server: Http2Server | Http2SecureServer = opts.tls
    ? createSecureServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        allowHTTP1: false,
        ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
      })
    : createServer();

  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    session.on("error", onSessionError);
    if (draining) session.close();
  });
  server.on("sessionError", onSessionError);
  const idleTimeoutMs = opts.idleTimeoutMs ?? 300_000;
  const sweeper = idleTimeoutMs > 0 ? idleSweeper(sessions, idleTimeoutMs) : undefined;
  server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    countActivity(stream.session);
    stream.on("error", onStreamError);
    const contentType = headers["content-type"];
    if (typeof contentType !== "string" || !GRPC_CONTENT_TYPE.test(contentType)) {
      // gRPC over HTTP/2: a non-gRPC content-type is answered at the HTTP layer (415).
      if (!stream.destroyed) stream.respond(REJECT_HEADERS);
      stream.end(
        `unsupported content-type ${JSON.stringify(contentType ?? "")}: expected application/grpc\n`,
      );
      stream.resume();
      return;
    }
    const path = headers[":path"] ?? "";
    const method = methods.get(path);
    if (method === undefined || headers[":method"] !== "POST") {
      refuse(stream, Status.UNIMPLEMENTED, `unknown method ${headers[":method"] ?? ""} ${path}`);
      return;
    }
    const encoding = headers["grpc-encoding"];
    const gzip = encoding === "gzip";
    if (!gzip && encoding !== undefined && encoding !== "identity") {
      refuse(stream, Status.UNIMPLEMENTED, `unsupported grpc-encoding ${String(encoding)}`, ACCEPT_ENCODING);
      return;
    }
    const timeout = headers["grpc-timeout"];
    let timeoutMs: number | undefined;
    if (typeof timeout === "string") {
      timeoutMs = parseGrpcTimeout(timeout);
      if (timeoutMs === undefined) {
        refuse(stream, Status.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeout)}`);
        return;
      }
    }
    if (inFlight >= maxInFlight) {
      events?.rejected("overload");
      refuse(stream, Status.RESOURCE_EXHAUSTED, `server overloaded: ${inFlight} calls in flight`);
      return;
    }
    inFlight++;
    events?.requestStarted();
    const s = stream as CallStream;
    s[CALL] = new UnaryCall(stream, headers, method, gzip, timeoutMs, host);
    s.on("data", onCallData);
    // `on`, not `once`: each fires once per stream anyway, and `once` allocates a wrapper per call.
    s.on("end", onCallEnd);
    s.on("close", onCallClose);
  });

  const allClosed = (): Promise<void> =>
    Promise.all([...sessions].map((s) => new Promise<void>((resolve) => s.once("close", resolve)))).then(
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
      for (const s of sessions) s.close();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([sessionsClosed, late]);
      clearTimeout(timer);
      for (const s of sessions) s.destroy();
      await closed;
    },
    async close() {
      draining = true;
      const closed = serverClosed();
      for (const s of sessions) s.destroy();
      await closed;
    },
    inFlight: () => inFlight,
  };
}
