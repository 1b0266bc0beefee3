/**
 * The tenant override store of a store setting: in-process for `memory`, else a Redis hash with
 * pub/sub notices on two connections of its own (commands, and a subscriber).
 */
import { createRedisClient } from "../redis/client.js";
import { parseRedisUrl } from "../redis/url.js";
import { MemoryTenantOverrides, type TenantOverrideStore } from "./overrides.js";
import { RedisTenantOverrides } from "./redis-overrides.js";

/** What the override store needs of the settings. */
export interface OverrideStoreSettings {
  /** `memory` or a Redis URL (`--store`). */
  readonly store: string;
  readonly keyPrefix: string;
  readonly redisTlsCaFile: string;
}

/** Build (without connecting) the override store of `s`; `onError` hears failed background reloads. */
export function createTenantOverrides(
  s: OverrideStoreSettings,
  onError: (err: unknown) => void,
): TenantOverrideStore {
  if (s.store === "memory") return new MemoryTenantOverrides();
  const target = parseRedisUrl(s.store);
  // Admin calls and reloads are rare and not on the decision path: queue while reconnecting and
  // allow a slow reply rather than fail a plan change.
  const client = () => {
    const c = createRedisClient(target, {
      commandTimeoutMs: 2_000,
      enableOfflineQueue: true,
      autoPipelining: false,
      maxRetriesPerRequest: 3,
      ...(s.redisTlsCaFile ? { tlsCaFile: s.redisTlsCaFile } : {}),
    });
    c.on("error", () => {});
    return c;
  };
  return new RedisTenantOverrides({
    client: client(),
    subscriber: client(),
    keyPrefix: s.keyPrefix,
    onError,
  });
}
