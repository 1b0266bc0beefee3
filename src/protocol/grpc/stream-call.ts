/**
 * Bidirectional-streaming gRPC calls (RLQS): request messages are decoded as their frames complete
 * and handed to the method's handler one by one (each consumed message is reported to the wire, so
 * the transport lets the peer send more); the handler sends any number of responses and ends the
 * call with a status. Runs on both transports' {@link StreamWire}.
 *
 * Bounds: a request message over `maxMessageBytes` ends the call RESOURCE_EXHAUSTED; responses the
 * peer does not read pile up to `maxBufferedBytes` (or to what the transport's own unsent budget
 * still allows, `wire.room`), then the call ends RESOURCE_EXHAUSTED (a client that stops reading
 * cannot grow the server's memory, nor get its whole connection cut for it).
 */
import { gunzipSync } from "node:zlib";
import type { CallHeaders } from "./call.js";
import { frame } from "./framing.js";
import { encodeGrpcMessage, GrpcError, Status, type StatusCode } from "./status.js";
import type { AcceptedCall, StreamWire } from "./transport.js";

/** What a streaming handler can do with its call. */
export interface StreamContext<O> {
  /** Send one response message. False when the call has ended. */
  send(output: O): boolean;
  /** End the call with `code` (OK included) and an optional message. Idempotent. */
  end(code: StatusCode, message?: string): void;
  readonly headers: CallHeaders;
  readonly peer: string | undefined;
  /** Whether the call has ended (by either side). */
  readonly ended: boolean;
  /**
   * The status the call was ended with (by the handler or by the transport, e.g. RESOURCE_EXHAUSTED
   * for a client not reading its responses); undefined while open, or when the client cancelled or
   * the connection went.
   */
  readonly endCode: StatusCode | undefined;
}

/** Callbacks of one open stream. */
export interface StreamHandler<I> {
  /** One decoded request message. */
  message(input: I): void;
  /** The client half-closed its side (no more messages). */
  halfClosed(): void;
  /** The call is over (ended by the handler, cancelled by the client, or its connection went away). */
  closed(): void;
}

/** One bidirectional-streaming RPC. */
export interface StreamMethod<I = unknown, O = unknown> {
  readonly path: string;
  /** Throw a GrpcError to pick the status; any other throw is INVALID_ARGUMENT. */
  decode(bytes: Uint8Array): I;
  encode(output: O): Uint8Array;
  /** A new call: return its handler. */
  open(ctx: StreamContext<O>): StreamHandler<I>;
}

/** Per-server state a streaming call reports to. */
export interface StreamHost {
  readonly maxMessageBytes: number;
  /** Response bytes buffered for a slow reader before the call is ended. */
  readonly maxBufferedBytes: number;
  readonly onError: (err: unknown, where: string) => void;
  /** Called exactly once per call, when it is over. */
  readonly callDone: (call: StreamCall) => void;
}

const EMPTY = Buffer.alloc(0);

/** A streaming call in progress; see the module comment. */
export class StreamCall implements AcceptedCall, StreamContext<unknown> {
  /** Long-lived: the own transport budgets client resets of it (protocol/h2/stream.ts). */
  readonly longLived = true;
  #pending: Buffer = EMPTY;
  #over = false;
  #endCode: StatusCode | undefined;
  readonly #handler: StreamHandler<unknown>;

  constructor(
    private readonly wire: StreamWire,
    readonly headers: CallHeaders,
    readonly peer: string | undefined,
    private readonly method: StreamMethod,
    private readonly gzip: boolean,
    private readonly host: StreamHost,
  ) {
    wire.open();
    this.#handler = method.open(this);
  }

  get ended(): boolean {
    return this.#over;
  }

  get endCode(): StatusCode | undefined {
    return this.#endCode;
  }

  /** The connection this call rides on (per-connection stream cap). */
  get connection(): object {
    return this.wire.connection;
  }

  push(chunk: Buffer): void {
    if (this.#over) return;
    this.#pending = this.#pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#pending, chunk]);
    while (!this.#over && this.#pending.length >= 5) {
      const compressed = this.#pending[0] === 1;
      const length = this.#pending.readUInt32BE(1);
      if (length > this.host.maxMessageBytes) {
        this.end(
          Status.RESOURCE_EXHAUSTED,
          `message of ${length} bytes exceeds the limit of ${this.host.maxMessageBytes}`,
        );
        return;
      }
      if (this.#pending.length < 5 + length) return;
      const body = this.#pending.subarray(5, 5 + length);
      this.#pending = this.#pending.length === 5 + length ? EMPTY : this.#pending.subarray(5 + length);
      this.wire.consumed(5 + length);
      this.#deliver(compressed, body);
    }
  }

  #deliver(compressed: boolean, body: Buffer): void {
    let input: unknown;
    try {
      if (compressed && !this.gzip)
        throw new GrpcError(Status.INTERNAL, "compressed message without grpc-encoding");
      const bytes = compressed ? gunzipSync(body, { maxOutputLength: this.host.maxMessageBytes }) : body;
      input = this.method.decode(bytes);
    } catch (err) {
      const e =
        err instanceof GrpcError
          ? err
          : new GrpcError(Status.INVALID_ARGUMENT, `cannot decode request: ${(err as Error).message}`);
      this.end(e.code, e.message);
      return;
    }
    try {
      this.#handler.message(input);
    } catch (err) {
      this.#handlerFailed(err);
    }
  }

  #handlerFailed(err: unknown): void {
    if (err instanceof GrpcError) this.end(err.code, err.message);
    else {
      this.host.onError(err, "handler");
      this.end(Status.INTERNAL, `internal error: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  run(): void {
    if (this.#over) return;
    if (this.#pending.length > 0) {
      this.end(Status.INTERNAL, "request ended inside a message");
      return;
    }
    try {
      this.#handler.halfClosed();
    } catch (err) {
      this.#handlerFailed(err);
    }
  }

  send(output: unknown): boolean {
    if (this.#over) return false;
    let framed: Buffer;
    try {
      framed = frame(this.method.encode(output));
    } catch (err) {
      this.#handlerFailed(err);
      return false;
    }
    if (this.wire.buffered + framed.length > this.host.maxBufferedBytes || framed.length > this.wire.room) {
      this.end(Status.RESOURCE_EXHAUSTED, "client is not reading its responses");
      return false;
    }
    try {
      this.wire.write(framed);
    } catch (err) {
      this.host.onError(err, "respond");
      this.closed();
      return false;
    }
    return true;
  }

  end(code: StatusCode, message?: string): void {
    if (this.#over) return;
    const safe = code === Status.UNKNOWN ? Status.INTERNAL : code;
    this.#endCode = safe;
    const fields: [string, string][] = [["grpc-status", String(safe)]];
    if (message !== undefined && message !== "") fields.push(["grpc-message", encodeGrpcMessage(message)]);
    this.wire.finish(fields);
    this.closed();
  }

  closed(): void {
    if (this.#over) return;
    this.#over = true;
    this.#pending = EMPTY;
    this.host.callDone(this);
    try {
      this.#handler.closed();
    } catch (err) {
      this.host.onError(err, "handler");
    }
  }
}
