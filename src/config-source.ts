/**
 * Builds the config source of `serve` from the settings: files (`--config`) or, with
 * `--xds-server`, the xDS client (src/protocol/xds) feeding the xDS source (src/config/xds-source.ts).
 */
import { readFileSync } from "node:fs";
import { fileSource } from "./config/file-source.js";
import type { ConfigSource } from "./config/source.js";
import { type ConfigFeed, xdsSource } from "./config/xds-source.js";
import type { Logger } from "./logger.js";
import { AdsClient } from "./protocol/xds/ads-client.js";
import type { AdsTarget } from "./protocol/xds/ads-stream.js";
import { parseAddr, type Settings, SettingsError } from "./settings.js";

/** `a=1,b=2` (or with `:` for headers) as a map; empty text = empty map. */
export function parsePairs(text: string, separator: "=" | ":", what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const at = part.indexOf(separator);
    if (at <= 0) throw new SettingsError(`${what}: ${JSON.stringify(part)} is not name${separator}value`);
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

function target(s: Settings): AdsTarget {
  const { host, port } = parseAddr(s.xdsServer, "--xds-server");
  const headers = parsePairs(s.xdsHeaders, ":", "--xds-headers");
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (!s.xdsTls) return { host, port, headers: lower };
  const file = (path: string) => (path === "" ? undefined : readFileSync(path));
  const tls = {
    ...(s.xdsTlsCa === "" ? {} : { ca: file(s.xdsTlsCa) }),
    ...(s.xdsTlsCert === "" ? {} : { cert: file(s.xdsTlsCert), key: file(s.xdsTlsKey) }),
    ...(s.xdsTlsServerName === "" ? {} : { serverName: s.xdsTlsServerName }),
  };
  return { host, port, headers: lower, tls };
}

function adsFeed(s: Settings, log: Logger): ConfigFeed {
  let client: AdsClient | undefined;
  return {
    start(onPush) {
      client = new AdsClient({
        target: target(s),
        nodeId: s.xdsNodeId,
        nodeMetadata: parsePairs(s.xdsNodeMetadata, "=", "--xds-node-metadata"),
        backoff: { initialMs: s.xdsBackoffInitial, maxMs: s.xdsBackoffMax, jitter: s.xdsBackoffJitter / 100 },
        onPush,
        onEvent: (e) => {
          if (e.kind === "connected") log.info({ server: s.xdsServer }, "xDS stream established");
          else if (e.kind === "disconnected")
            log.warn(
              { server: s.xdsServer, error: e.error, retryInMs: Math.round(e.retryInMs) },
              "xDS stream ended; reconnecting",
            );
          else log.warn({ version: e.version, error: e.error }, "xDS response refused (NACK)");
        },
      });
      client.start();
    },
    close: () => client?.close(),
  };
}

/** The config source the settings name, logging through `logger`. */
export function createConfigSource(s: Settings, logger: Logger): ConfigSource {
  const onError = (err: unknown) => logger.warn({ err }, "config watcher error; polling continues");
  const common = { tenantsPath: s.tenants, debounceMs: s.reloadDebounce, pollMs: s.reloadPoll, onError };
  if (s.xdsServer === "") return fileSource({ path: s.config, ...common });
  const log = logger.child({ component: "xds" });
  return xdsSource({
    name: `xds://${s.xdsServer}`,
    feed: adsFeed(s, log),
    forceStart: s.xdsForceStart,
    onRefused: (version, problems) =>
      log.warn({ version, problems }, "xDS config invalid; NACKed, keeping the previous rules"),
    ...common,
  });
}
