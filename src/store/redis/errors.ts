/**
 * Classify what ioredis throws into a `StoreError` with a stable code and whether retrying later can
 * help. The guard (store/guard) turns the code into a failure-policy decision; the code is also the
 * `storeError` metric label, so the set is small and fixed.
 */
import { StoreError } from "../store.js";

/** Stable codes of Redis store errors (bounded metric label values). */
export const REDIS_ERROR_CODES = [
  "timeout",
  "connection",
  "script",
  "cluster",
  "auth",
  "tls",
  "busy",
  "oom",
  "reply",
] as const;

/** One of {@link REDIS_ERROR_CODES}. */
export type RedisErrorCode = (typeof REDIS_ERROR_CODES)[number];

interface Rule {
  readonly test: RegExp;
  readonly code: RedisErrorCode;
  readonly transient: boolean;
  readonly hint: string;
}

// Order matters: the first matching rule wins. Matched against "name: message" and the errno code.
const RULES: readonly Rule[] = [
  {
    test: /timed out|ETIMEDOUT/i,
    code: "timeout",
    transient: true,
    hint: "raise commandTimeoutMs if Redis is slow",
  },
  {
    test: /NOAUTH|WRONGPASS|NOPERM|invalid password|AUTH failed/i,
    code: "auth",
    transient: false,
    hint: "check the user and password in the store URL",
  },
  {
    test: /CROSSSLOT/,
    code: "cluster",
    transient: false,
    hint: "bucket keys of one script call must share a hash tag (engine/keys.ts)",
  },
  {
    test: /CLUSTERDOWN|TRYAGAIN|MOVED|ASK |ClusterAllFailed|slots cache|READONLY|MASTERDOWN|Too many Cluster redirections/i,
    code: "cluster",
    transient: true,
    hint: "the cluster is resharding or failing over; redirections are followed and CLUSTERDOWN resent briefly, then the failure policy decides",
  },
  {
    test: /certificate|ERR_TLS|SSL routines|wrong version number/i,
    code: "tls",
    transient: false,
    hint: "check the CA file (tlsCaFile) and that the server name matches the certificate",
  },
  { test: /^BUSY|BUSY Redis/m, code: "busy", transient: true, hint: "a long script is running on Redis" },
  { test: /LOADING/, code: "busy", transient: true, hint: "Redis is loading its dataset" },
  {
    test: /OOM/,
    code: "oom",
    transient: true,
    hint: "Redis hit maxmemory; use an eviction policy or more memory",
  },
  {
    test: /ERR (Error running script|user_script)|NOSCRIPT|script|@user_script/i,
    code: "script",
    transient: false,
    hint: "a Lua script failed; this is a bug, please report it",
  },
  {
    test: /ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed|enableOfflineQueue|Stream isn't writeable|MaxRetriesPerRequest|Reached the max retries|connect|socket|closed|TLS/i,
    code: "connection",
    transient: true,
    hint: "Redis is unreachable; ioredis reconnects in the background",
  },
];

/** Wrap any error from ioredis into a classified `StoreError` (a `StoreError` is returned as is). */
export function classifyRedisError(err: unknown, operation: string): StoreError {
  if (err instanceof StoreError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const errno = (e as { code?: unknown }).code;
  const text = `${e.name}: ${e.message} ${typeof errno === "string" ? errno : ""}`;
  const rule = RULES.find((r) => r.test.test(text));
  const code: RedisErrorCode = rule?.code ?? "reply";
  const transient = rule?.transient ?? false;
  const hint = rule?.hint ?? "unexpected Redis reply";
  return new StoreError(`redis ${operation} failed (${code}): ${e.message} (${hint})`, {
    code,
    transient,
    cause: err,
  });
}
