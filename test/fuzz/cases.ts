/**
 * Fuzz inputs for the gRPC port, one generator per family, each paired with the precise answer the
 * server must give. Every input is drawn from a seeded {@link Prng}, so a failure can be replayed.
 */

import { Status } from "../../src/protocol/grpc/status.js";
import { RLS_PATH } from "../../src/protocol/rls.js";
import { grpcFrame, pieces, type RawCall } from "../protocol/grpc/raw-client.js";
import type { Prng } from "./prng.js";
import { MAX_MESSAGE_BYTES } from "./target.js";
import { deepGroups, deepMessages, type RawEntry, type RawRequest, writeRequest } from "./wire.js";

/** What the server must answer. */
export type Expected =
  /** A gRPC status; `message` must match when given (non-OK statuses always carry one). */
  | { readonly grpc: readonly number[]; readonly message?: RegExp }
  /** An HTTP status without any grpc-status. */
  | { readonly http: number }
  /** The HTTP/2 layer refuses the stream with this error code. */
  | { readonly reset: RegExp };

export interface FuzzCase {
  readonly family: string;
  readonly call: RawCall;
  readonly expected: Expected;
  /** Run on a fresh connection: the input may make the server cut the connection. */
  readonly ownSession?: boolean;
}

const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
const rls = (chunks: readonly Uint8Array[], headers: RawCall["headers"] = {}): RawCall => ({
  path: RLS_PATH,
  chunks,
  headers,
});
/** Any reason the RLS codec gives. */
const CODEC_REASON =
  /^(cannot decode RateLimitRequest: |domain |no descriptors|\d+ descriptors, |descriptors\[\d+\])/;
/** Any reason the framing layer gives. */
const FRAMING_REASON =
  /^(request ended |unary request carried more than one message|received message larger than max|invalid compressed flag|compressed flag set but no grpc-encoding)/;

/** A request the server must answer OK: 1–5 descriptors, matched or not. */
export function validRequest(p: Prng): RawRequest {
  const descriptors: RawEntry[][] = [];
  for (let i = p.int(1, 5); i > 0; i--) {
    const entries: RawEntry[] = [{ key: "tenant", value: p.word(p.int(1, 20)) }];
    if (p.next() < 0.3) entries.push({ key: p.word(p.int(1, 10)), value: p.word(p.int(0, 10)) });
    descriptors.push(entries);
  }
  return { domain: p.pick(["edge", "other", p.word(8)]), descriptors };
}

const valid = (p: Prng): FuzzCase => ({
  family: "valid",
  call: rls([grpcFrame(writeRequest(validRequest(p)))]),
  expected: { grpc: [Status.OK] },
});

const randomMessage = (p: Prng): FuzzCase => ({
  family: "random message bytes",
  call: rls([grpcFrame(p.bytes(p.int(0, 300)))]),
  expected: { grpc: [Status.OK, Status.INVALID_ARGUMENT], message: CODEC_REASON },
});

const randomStream = (p: Prng): FuzzCase => ({
  family: "random stream bytes",
  call: rls(pieces(p.bytes(p.int(1, 400)), p.int(1, 200))),
  expected: {
    grpc: [Status.OK, Status.INVALID_ARGUMENT, Status.INTERNAL, Status.RESOURCE_EXHAUSTED],
    message: new RegExp(`${CODEC_REASON.source}|${FRAMING_REASON.source}`),
  },
});

function truncated(p: Prng): FuzzCase {
  const whole = grpcFrame(writeRequest(validRequest(p)));
  const cut = p.int(0, whole.length - 1);
  return {
    family: "truncated frame",
    call: rls(cut === 0 ? [] : pieces(whole.subarray(0, cut), p.int(1, 64))),
    expected: {
      grpc: [Status.INTERNAL],
      message: exactly(
        cut < 5 ? "request ended before a complete message" : "request ended inside a message",
      ),
    },
  };
}

function oversized(p: Prng): FuzzCase {
  const declared = p.int(MAX_MESSAGE_BYTES + 1, 0xffff_ffff);
  const prefix = Buffer.alloc(5);
  prefix[0] = p.int(0, 1);
  prefix.writeUInt32BE(declared, 1);
  return {
    family: "oversized frame",
    call: rls([Buffer.concat([prefix, p.bytes(p.int(0, 100))])]),
    expected: {
      grpc: [Status.RESOURCE_EXHAUSTED],
      message: exactly(`received message larger than max (${declared} vs. ${MAX_MESSAGE_BYTES})`),
    },
  };
}

const NOT_GRPC = [
  "application/json",
  "text/plain",
  "application/grpc-web",
  "application/grpcx",
  "application/x-protobuf",
];

const wrongContentType = (p: Prng): FuzzCase => ({
  family: "wrong content-type",
  call: rls([grpcFrame(writeRequest(validRequest(p)))], {
    "content-type": p.next() < 0.5 ? p.pick(NOT_GRPC) : `${p.word(p.int(1, 12))}/${p.word(p.int(1, 12))}`,
  }),
  expected: { http: 415 },
});

function hugeHeaders(p: Prng): FuzzCase {
  const body = [grpcFrame(writeRequest(validRequest(p)))];
  const roll = p.int(0, 2);
  if (roll === 0)
    // Custom metadata well inside the 64 KiB header list bound is served as usual.
    return {
      family: "large headers",
      call: rls(body, { "x-big": p.word(p.int(1000, 30_000)) }),
      expected: { grpc: [Status.OK] },
    };
  if (roll === 1)
    return {
      family: "huge headers",
      call: rls(body, { "x-huge": p.word(p.int(70_000, 150_000)) }),
      expected: { reset: /NGHTTP2_REFUSED_STREAM/ },
      ownSession: true,
    };
  const many: Record<string, string> = {};
  for (let i = p.int(130, 400); i > 0; i--) many[`x-h${i}`] = p.word(4);
  return {
    family: "too many headers",
    call: rls(body, many),
    expected: { reset: /NGHTTP2_ENHANCE_YOUR_CALM/ },
    ownSession: true,
  };
}

function hugeDescriptors(p: Prng): FuzzCase {
  const family = "deep or huge descriptors";
  const entry = (): RawEntry => ({ key: "tenant", value: p.word(4) });
  const invalid = (req: RawRequest, reason: string): FuzzCase => ({
    family,
    call: rls([grpcFrame(writeRequest(req))]),
    expected: { grpc: [Status.INVALID_ARGUMENT], message: exactly(reason) },
  });
  switch (p.int(0, 4)) {
    case 0: {
      const n = p.int(65, 1000);
      const descriptors = Array.from({ length: n }, () => [entry()]);
      return invalid({ domain: "edge", descriptors }, `${n} descriptors, more than the limit of 64`);
    }
    case 1: {
      const n = p.int(17, 500);
      const entries = Array.from({ length: n }, entry);
      return invalid(
        { domain: "edge", descriptors: [entries] },
        `descriptors[0] has ${n} entries, more than the limit of 16`,
      );
    }
    case 2: {
      const n = p.int(257, 20_000);
      return invalid(
        { domain: "edge", descriptors: [[{ key: "tenant", value: p.word(n) }]] },
        `descriptors[0].entries[0].value is ${n} bytes, more than the limit of 256`,
      );
    }
    case 3:
      // An unterminated group nested up to 100k deep: a decode error, however deep.
      return {
        family,
        call: rls([grpcFrame(Buffer.concat([writeRequest(validRequest(p)), deepGroups(p.int(1, 100_000))]))]),
        expected: { grpc: [Status.INVALID_ARGUMENT], message: /^cannot decode RateLimitRequest: / },
      };
    default:
      // Deeply nested unknown fields are skipped without being parsed: the request is served.
      return {
        family,
        call: rls([grpcFrame(Buffer.concat([writeRequest(validRequest(p)), deepMessages(p.int(1, 300))]))]),
        expected: { grpc: [Status.OK] },
      };
  }
}

/** Byte sequences that are not UTF-8: bad lead, lone continuation, truncated, overlong, surrogate. */
const NOT_UTF8 = [
  [0xff],
  [0x80],
  [0xc3, 0x28],
  [0xe2, 0x28, 0xa1],
  [0xf0, 0x9f, 0x98],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
];

function invalidUtf8(p: Prng): FuzzCase {
  const bad = Buffer.concat([
    Buffer.from(p.word(p.int(0, 10))),
    Buffer.from(p.pick(NOT_UTF8)),
    Buffer.from(p.word(p.int(0, 10))),
  ]);
  const req = validRequest(p);
  const where = p.int(0, 2);
  const d = p.int(0, req.descriptors.length - 1);
  const descriptors = req.descriptors.map((entries, i) =>
    i !== d || where === 0
      ? entries
      : entries.map((e, j) => (j === 0 ? (where === 1 ? { ...e, key: bad } : { ...e, value: bad }) : e)),
  );
  const field = ["domain", `descriptors[${d}].entries[0].key`, `descriptors[${d}].entries[0].value`][where];
  return {
    family: "invalid UTF-8",
    call: rls([grpcFrame(writeRequest({ domain: where === 0 ? bad : req.domain, descriptors }))]),
    expected: { grpc: [Status.INVALID_ARGUMENT], message: exactly(`${field} is not valid UTF-8`) },
  };
}

/** Every generator, by family name. */
export const GENERATORS: Readonly<Record<string, (p: Prng) => FuzzCase>> = {
  valid,
  randomMessage,
  randomStream,
  truncated,
  oversized,
  wrongContentType,
  hugeHeaders,
  hugeDescriptors,
  invalidUtf8,
};
