/**
 * A lean ShouldRateLimit client for chaos and multi-instance tests: raw node:http2 (h2c) with
 * protobuf-es messages from src/gen, one session per client, many concurrent streams. Every call
 * resolves (never rejects) with what came back: the gRPC status, the decoded overall code, the
 * response headers tollgate asked Envoy to add, and how long it took.
 */
import { type ClientHttp2Session, connect } from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  RateLimitRequestSchema,
  RateLimitResponse_Code,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";

const PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** One descriptor as `[key, value]` entries. */
export type Entries = readonly (readonly [string, string])[];

/** What one call got back. */
export interface Answer {
  /** gRPC status code from the trailers (0 = OK); `-1` when the stream failed without a status. */
  readonly grpcStatus: number;
  readonly grpcMessage: string;
  /** Overall code when grpcStatus is 0. */
  readonly code: "OK" | "OVER_LIMIT" | "UNKNOWN" | undefined;
  /** limit_remaining of each descriptor status, in request order (empty unless grpcStatus is 0). */
  readonly remaining: readonly number[];
  /** response_headers_to_add, by lower-cased name. */
  readonly headers: Readonly<Record<string, string>>;
  /** When the call was sent (`performance.now()` of the test process). */
  readonly sentAt: number;
  /** Milliseconds from send to the end of the stream. */
  readonly latencyMs: number;
}

/** A connected client; `close()` ends the session. */
export interface RlsClient {
  call(domain: string, descriptors: readonly Entries[], opts?: { deadlineMs?: number }): Promise<Answer>;
  close(): void;
}

function frame(domain: string, descriptors: readonly Entries[]): Buffer {
  const msg = toBinary(
    RateLimitRequestSchema,
    create(RateLimitRequestSchema, {
      domain,
      descriptors: descriptors.map((d) => ({ entries: d.map(([key, value]) => ({ key, value })) })),
    }),
  );
  const out = Buffer.alloc(5 + msg.length);
  out.writeUInt32BE(msg.length, 1);
  out.set(msg, 5);
  return out;
}

function decode(body: Buffer): Pick<Answer, "code" | "headers" | "remaining"> {
  if (body.length < 5) return { code: undefined, headers: {}, remaining: [] };
  const res = fromBinary(RateLimitResponseSchema, body.subarray(5));
  const headers: Record<string, string> = {};
  for (const h of res.responseHeadersToAdd) headers[h.key.toLowerCase()] = h.value;
  const remaining = res.statuses.map((st) => st.limitRemaining);
  return { code: RateLimitResponse_Code[res.overallCode] as Answer["code"], headers, remaining };
}

/** Connect to `127.0.0.1:port` (h2c). */
export function rlsClient(port: number): RlsClient {
  let session: ClientHttp2Session | undefined;
  const open = () => {
    if (session === undefined || session.closed || session.destroyed) {
      session = connect(`http://127.0.0.1:${port}`);
      session.on("error", () => {});
    }
    return session;
  };
  return {
    call(domain, descriptors, opts = {}) {
      const sentAt = performance.now();
      return new Promise((resolve) => {
        const headers: Record<string, string> = {
          ":method": "POST",
          ":path": PATH,
          "content-type": "application/grpc",
          te: "trailers",
        };
        if (opts.deadlineMs !== undefined) headers["grpc-timeout"] = `${opts.deadlineMs}m`;
        const stream = open().request(headers);
        const chunks: Buffer[] = [];
        let status = -1;
        let message = "";
        const take = (h: Record<string, unknown>) => {
          if (h["grpc-status"] !== undefined) status = Number(h["grpc-status"]);
          if (typeof h["grpc-message"] === "string") message = decodeURIComponent(h["grpc-message"]);
        };
        stream.on("response", take);
        stream.on("trailers", take);
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("error", () => {});
        stream.on("close", () => {
          const body =
            status === 0 ? decode(Buffer.concat(chunks)) : { code: undefined, headers: {}, remaining: [] };
          resolve({
            grpcStatus: status,
            grpcMessage: message,
            ...body,
            sentAt,
            latencyMs: performance.now() - sentAt,
          });
        });
        stream.end(frame(domain, descriptors));
      });
    },
    close() {
      session?.close();
      session?.destroy();
    },
  };
}

/** gRPC status codes the tests name. */
export const GRPC = Object.freeze({
  OK: 0,
  UNKNOWN: 2,
  RESOURCE_EXHAUSTED: 8,
  DEADLINE_EXCEEDED: 4,
  UNAVAILABLE: 14,
});
