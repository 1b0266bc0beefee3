/**
 * Parse the `--store` URL of a Redis backend into a plain target description, and redact it for logs.
 *
 * Accepted forms:
 * - `redis://[user:pass@]host:port[/db]` — one node (db 0–15 by default convention, any integer ≥ 0)
 * - `rediss://[user:pass@]host:port[/db]` — the same over TLS (CA file from the store options)
 * - `redis-sentinel://[user:pass@]host:port,host:port/mastername[/db]` — Sentinel-managed master
 * - `redis-cluster://[user:pass@]host:port,host:port` — Redis Cluster seed nodes
 */

/** A host and port of one node or seed. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Credentials from the URL; never log these (see `redactUrl`). */
export interface RedisAuth {
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/** What a Redis store URL designates. */
export type RedisTarget =
  | ({ readonly mode: "single"; readonly tls: boolean; readonly db: number } & HostPort & RedisAuth)
  | ({
      readonly mode: "sentinel";
      readonly sentinels: readonly HostPort[];
      readonly masterName: string;
      readonly db: number;
    } & RedisAuth)
  | ({ readonly mode: "cluster"; readonly seeds: readonly HostPort[] } & RedisAuth);

/** A store URL that cannot be used; the message says what is wrong and shows the expected form. */
export class RedisUrlError extends Error {
  constructor(url: string, problem: string) {
    super(`invalid Redis store URL ${redactUrl(url)}: ${problem}`);
    this.name = "RedisUrlError";
  }
}

const FORMS: Readonly<Record<string, string>> = {
  "redis:": "redis://[user:pass@]host:port[/db]",
  "rediss:": "rediss://[user:pass@]host:port[/db]",
  "redis-sentinel:": "redis-sentinel://host:port,host:port/mastername",
  "redis-cluster:": "redis-cluster://host:port,host:port",
};

/** Replace the password (or a lone user token) of a Redis URL with `***`, so it is safe to log. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return colon === -1 ? `${scheme}***@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}

function parseHostPort(url: string, text: string): HostPort {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(text);
  if (!m?.[1] || !m[2]) throw new RedisUrlError(url, `"${text}" is not host:port (the port is required)`);
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw new RedisUrlError(url, `port ${m[2]} is out of range 1-65535`);
  return { host: m[1].replace(/^\[|\]$/g, ""), port };
}

function parseDb(url: string, text: string | undefined): number {
  if (text === undefined || text === "") return 0;
  if (!/^\d+$/.test(text)) throw new RedisUrlError(url, `database "${text}" is not a whole number`);
  return Number(text);
}

function parseAuth(url: string, userinfo: string | undefined): RedisAuth {
  if (userinfo === undefined) return { username: undefined, password: undefined };
  const colon = userinfo.indexOf(":");
  try {
    if (colon === -1) return { username: undefined, password: decodeURIComponent(userinfo) };
    const user = decodeURIComponent(userinfo.slice(0, colon));
    return {
      username: user === "" ? undefined : user,
      password: decodeURIComponent(userinfo.slice(colon + 1)),
    };
  } catch {
    throw new RedisUrlError(url, "credentials contain an invalid %-escape");
  }
}

/** Parse a Redis store URL; throws `RedisUrlError` naming the problem and the expected form. */
export function parseRedisUrl(url: string): RedisTarget {
  const m = /^([a-z-]+:)\/\/(?:([^@/]*)@)?([^/]*)(?:\/(.*))?$/i.exec(url.trim());
  const scheme = m?.[1]?.toLowerCase();
  const form = scheme === undefined ? undefined : FORMS[scheme];
  if (!m || scheme === undefined || form === undefined) {
    throw new RedisUrlError(url, `unknown scheme; use one of ${Object.values(FORMS).join(", ")}`);
  }
  const auth = parseAuth(url, m[2]);
  const hosts = (m[3] ?? "").split(",").filter((h) => h !== "");
  const path = m[4] ?? "";
  if (hosts.length === 0) throw new RedisUrlError(url, `no host given; expected ${form}`);
  const nodes = hosts.map((h) => parseHostPort(url, h));
  if (scheme === "redis:" || scheme === "rediss:") {
    const node = nodes[0];
    if (nodes.length > 1 || !node) {
      throw new RedisUrlError(
        url,
        "one host only; for several nodes use redis-cluster:// or redis-sentinel://",
      );
    }
    return { mode: "single", tls: scheme === "rediss:", db: parseDb(url, path), ...node, ...auth };
  }
  if (scheme === "redis-sentinel:") {
    const [masterName, db, ...rest] = path.split("/");
    if (!masterName) throw new RedisUrlError(url, `the master name is missing; expected ${form}`);
    if (rest.length > 0) throw new RedisUrlError(url, `unexpected path after the database; expected ${form}`);
    return { mode: "sentinel", sentinels: nodes, masterName, db: parseDb(url, db), ...auth };
  }
  if (path !== "") throw new RedisUrlError(url, `a cluster has no database or path; expected ${form}`);
  return { mode: "cluster", seeds: nodes, ...auth };
}
