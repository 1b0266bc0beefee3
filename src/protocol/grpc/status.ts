/**
 * gRPC status codes and the error handlers throw. Envoy treats UNKNOWN (2) from a rate limit service
 * as OK (fail open), so tollgate never lets an unexpected error become UNKNOWN: it is mapped to
 * INTERNAL, and storage failures to UNAVAILABLE.
 */

/** gRPC status codes by name (the subset tollgate answers or maps). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** One of the numeric codes of {@link Status}. */
export type StatusCode = (typeof Status)[keyof typeof Status];

/** An error with a gRPC status, thrown by method handlers and by the transport itself. */
export class GrpcError extends Error {
  override readonly name = "GrpcError";
  readonly code: StatusCode;
  constructor(code: StatusCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * `grpc-message` is percent-encoded: bytes outside printable ASCII (0x20–0x7E) and `%` itself become
 * `%XX` of their UTF-8 bytes (gRPC over HTTP/2 spec).
 */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte < 0x20 || byte > 0x7e || byte === 0x25
        ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
        : String.fromCharCode(byte);
  }
  return out;
}
