/**
 * One unary call on an accepted stream: collect the request message, decode, run the handler, answer
 * with one framed message and `grpc-status: 0`, or trailers-only with the error status.
 *
 * Hot path: the stream listeners and the deadline callback are module-level functions (no closures
 * per request), the AbortController is created only when a handler reads `signal`, and the response
 * headers, options and trailers are frozen constants.
 */
import { systemTimers, type TimerHandle } from "../../engine/types.js";
import { frame, UnaryReader } from "./framing.js";
import { encodeGrpcMessage, GrpcError, Status, type StatusCode } from "./status.js";

/** What a handler gets besides its decoded input. */
export interface CallContext {
  /** Epoch ms by which the caller wants an answer (from `grpc-timeout`), if it sent one. */
  readonly deadline: number | undefined;
  /** Aborted when the deadline passes, the client cancels or the server closes. */
  readonly signal: AbortSignal;
  /** Request headers (custom metadata included, lower-case names). */
  readonly headers: CallHeaders;
  /** Remote address of the connection. */
  readonly peer: string | undefined;
}

/** Request headers as a transport hands them over: lower-case names. */
export type CallHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The transport's side of one call (protocol/grpc/server.ts has one over node:http2, one over the
 * own HTTP/2 connection of protocol/h2).
 */
export interface CallStream {
  /** Nothing more can be sent: answered, reset or its connection gone. */
  readonly destroyed: boolean;
  /** Response headers already went out. */
  readonly headersSent: boolean;
  /** Remote address of the connection. */
  readonly peer: string | undefined;
  /** `:status 200`, `content-type: application/grpc`, `framed` as DATA, then trailers `grpc-status: 0`. */
  respondOk(framed: Buffer): void;
  /** One HEADERS frame that ends the stream: `:status 200`, gRPC content-type, then `fields`. */
  respondTrailersOnly(fields: readonly (readonly [string, string])[]): void;
  /** Reset the stream. */
  destroy(): void;
}

/** One unary RPC: `/package.Service/Method`, its codecs and its handler. */
export interface UnaryMethod<I = unknown, O = unknown> {
  readonly path: string;
  /** Throw a GrpcError to pick the status; any other throw is INVALID_ARGUMENT. */
  decode(bytes: Uint8Array): I;
  encode(output: O): Uint8Array;
  /** Optional: `output` as a whole uncompressed gRPC frame, header included (saves a copy). */
  encodeFramed?(output: O): Buffer;
  /**
   * The output, or a promise of it; throw (or reject with) a GrpcError to answer its status, anything
   * else is INTERNAL. An output returned as is is answered in the same turn, without a microtask hop.
   */
  handle(input: I, ctx: CallContext): O | Promise<O>;
}

/** Per-server state a call reports to. */
export interface CallHost {
  readonly maxMessageBytes: number;
  readonly onError: (err: unknown, where: string) => void;
  /** Called exactly once per call, when it is answered or abandoned. */
  readonly callDone: () => void;
  /** A call refused for bad input or a passed deadline (for the rejected-requests metric). */
  readonly rejected?: (reason: "invalid_argument" | "deadline") => void;
}

/**
 * Longest delay a Node timer can hold (2^31-1 ms, about 24.8 days); a longer one fires after 1 ms.
 * `grpc-timeout` allows up to 99999999H, so a deadline past this is kept but never armed.
 */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A status Envoy could misread: UNKNOWN (Envoy's rate limit filter treats it as OK) and OK (an
 * "error" without a message) both become INTERNAL.
 */
function safeCode(code: StatusCode): StatusCode {
  return code === Status.OK || code === Status.UNKNOWN ? Status.INTERNAL : code;
}

/** Answer trailers-only: status and message in the one HEADERS frame, which ends the stream. */
export function trailersOnly(
  stream: CallStream,
  code: StatusCode,
  message: string,
  extra?: Readonly<Record<string, string>>,
): void {
  if (stream.destroyed || stream.headersSent) return;
  const fields: [string, string][] = [
    ["grpc-status", String(safeCode(code))],
    ["grpc-message", encodeGrpcMessage(message)],
  ];
  if (extra) for (const [name, value] of Object.entries(extra)) fields.push([name, value]);
  stream.respondTrailersOnly(fields);
}

function onDeadline(call: UnaryCall): void {
  call.timer = undefined;
  call.host.rejected?.("deadline");
  call.fail(new GrpcError(Status.DEADLINE_EXCEEDED, "deadline exceeded"));
}

/** A call in progress; also the handler's CallContext. */
export class UnaryCall implements CallContext {
  readonly deadline: number | undefined;
  timer: TimerHandle | undefined;
  private finished = false;
  private controller: AbortController | undefined;
  private readonly reader: UnaryReader;

  constructor(
    readonly stream: CallStream,
    readonly headers: CallHeaders,
    private readonly method: UnaryMethod,
    private readonly gzip: boolean,
    timeoutMs: number | undefined,
    readonly host: CallHost,
  ) {
    this.reader = new UnaryReader(host.maxMessageBytes);
    if (timeoutMs !== undefined) {
      this.deadline = Date.now() + timeoutMs;
      if (timeoutMs <= MAX_TIMER_MS) this.timer = systemTimers.set(() => onDeadline(this), timeoutMs);
    }
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.finished && !this.controller.signal.aborted) this.controller.abort();
    return this.controller.signal;
  }

  get peer(): string | undefined {
    return this.stream.peer;
  }

  /** A DATA chunk arrived. */
  push(chunk: Buffer): void {
    if (this.finished) return;
    try {
      this.reader.push(chunk);
    } catch (err) {
      this.fail(err);
    }
  }

  /** The request half ended: decode and run the handler. Never throws, never rejects. */
  run(): void {
    if (this.finished) return;
    let input: unknown;
    try {
      input = this.method.decode(this.reader.finish(this.gzip ? "gzip" : "identity"));
    } catch (err) {
      const e =
        err instanceof GrpcError
          ? err
          : new GrpcError(Status.INVALID_ARGUMENT, `cannot decode request: ${(err as Error).message}`);
      if (e.code === Status.INVALID_ARGUMENT) this.host.rejected?.("invalid_argument");
      this.fail(e);
      return;
    }
    let output: unknown;
    try {
      output = this.method.handle(input, this);
    } catch (err) {
      this.handlerFailed(err);
      return;
    }
    if (output instanceof Promise)
      output.then(
        (o) => this.respond(o),
        (err) => this.handlerFailed(err),
      );
    else this.respond(output);
  }

  private handlerFailed(err: unknown): void {
    if (!(err instanceof GrpcError)) this.host.onError(err, "handler");
    this.fail(err);
  }

  /** Encode and send the handler's output with `grpc-status: 0`, unless the call already ended. */
  private respond(output: unknown): void {
    if (this.finished) return;
    let framed: Buffer;
    try {
      const m = this.method;
      framed = m.encodeFramed ? m.encodeFramed(output) : frame(m.encode(output));
    } catch (err) {
      this.handlerFailed(err);
      return;
    }
    if (!this.settle()) return;
    const stream = this.stream;
    if (stream.destroyed) return;
    try {
      stream.respondOk(framed);
    } catch (err) {
      // The session closed under us (nobody awaits run(): nothing may escape).
      this.host.onError(err, "respond");
      stream.destroy();
    }
  }

  /** Answer `err` trailers-only (non-GrpcErrors as INTERNAL) unless already answered. */
  fail(err: unknown): void {
    if (!this.settle()) return;
    if (err instanceof GrpcError) trailersOnly(this.stream, err.code, err.message);
    else
      trailersOnly(
        this.stream,
        Status.INTERNAL,
        `internal error: ${err instanceof Error ? err.message : String(err)}`,
      );
  }

  /** The stream closed (answered, reset by the client, or destroyed). */
  closed(): void {
    this.settle();
  }

  /** Mark finished once: stop the timer, abort the signal, release the in-flight slot. */
  private settle(): boolean {
    if (this.finished) return false;
    this.finished = true;
    if (this.timer !== undefined) systemTimers.clear(this.timer);
    this.controller?.abort();
    this.host.callDone();
    return true;
  }
}
