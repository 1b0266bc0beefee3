import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  loadSettings,
  parseDuration,
  renderSettingsTable,
  SETTING_NAMES,
  SETTINGS,
  SettingsError,
  settingOfEnv,
} from "../../src/settings.js";

describe("settings", () => {
  it("uses the documented defaults when nothing is set", () => {
    const s = loadSettings([], {});
    expect(s.grpcAddr).toEqual({ host: "0.0.0.0", port: 8081 });
    expect(s.httpAddr).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(s.store).toBe("memory");
    expect(s.maxDescriptors).toBe(64);
    expect(s.drainTimeout).toBe(10_000);
  });

  it("bounds streaming calls and RLQS streams through settings, with the former fixed values as defaults", () => {
    const d = loadSettings([], {});
    expect([d.grpcMaxStreamingCalls, d.grpcMaxStreamUnreadBytes, d.rlqsStreamIdleTimeout]).toEqual([
      100, 1_048_576, 0,
    ]);
    const s = loadSettings(["--grpc-max-streaming-calls", "2", "--rlqs-stream-idle-timeout", "3s"], {
      TOLLGATE_GRPC_MAX_STREAM_UNREAD_BYTES: "65536",
    });
    expect([s.grpcMaxStreamingCalls, s.grpcMaxStreamUnreadBytes, s.rlqsStreamIdleTimeout]).toEqual([
      2, 65_536, 3000,
    ]);
    expect(() => loadSettings(["--grpc-max-streaming-calls", "0"], {})).toThrow(/at least 1/);
    expect(() => loadSettings(["--grpc-max-stream-unread-bytes", "100"], {})).toThrow(/at least 1024/);
  });

  it("prefers a flag over its environment twin over the default", () => {
    const env = { TOLLGATE_STORE: "redis://r:6379", TOLLGATE_MAX_ENTRIES: "8" };
    const s = loadSettings(["--store", "memory", "--grpc-addr=127.0.0.1:0"], env);
    expect(s.store).toBe("memory");
    expect(s.maxEntries).toBe(8);
    expect(s.grpcAddr).toEqual({ host: "127.0.0.1", port: 0 });
  });

  it("reads the admin token from its deprecated reset-token names, the current names winning", () => {
    expect(loadSettings(["--reset-token", "old"], {}).adminToken).toBe("old");
    expect(loadSettings([], { TOLLGATE_RESET_TOKEN: "old" }).adminToken).toBe("old");
    expect(loadSettings(["--admin-token", "new", "--reset-token", "old"], {}).adminToken).toBe("new");
    expect(loadSettings(["--reset-token=old", "--admin-token=new"], {}).adminToken).toBe("new");
    expect(loadSettings([], { TOLLGATE_RESET_TOKEN: "old", TOLLGATE_ADMIN_TOKEN: "new" }).adminToken).toBe(
      "new",
    );
    expect(loadSettings(["--reset-token", "flag"], { TOLLGATE_ADMIN_TOKEN: "env" }).adminToken).toBe("flag");
  });

  it("reads a bare boolean flag as true", () => {
    expect(loadSettings(["--shadow-mode"], {}).shadowMode).toBe(true);
    expect(loadSettings([], { TOLLGATE_SHADOW_MODE: "false" }).shadowMode).toBe(false);
  });

  it("rejects a bad value naming the setting and what it expects", () => {
    expect(() => loadSettings([], { TOLLGATE_MAX_DESCRIPTORS: "-1" })).toThrow(
      /TOLLGATE_MAX_DESCRIPTORS: expected a whole number \(got "-1"\)/,
    );
    expect(() => loadSettings(["--response-headers", "fancy"], {})).toThrow(
      /--response-headers: expected one of legacy, draft03, ietf, off/,
    );
    expect(() => loadSettings(["--grpc-addr", "nope"], {})).toThrow(/expected HOST:PORT/);
  });

  it("rejects an unknown flag and suggests a close one", () => {
    expect(() => loadSettings(["--grpc-adr", "x"], {})).toThrow(SettingsError);
    expect(() => loadSettings(["--grpc-adr", "x"], {})).toThrow(/did you mean --grpc-addr/);
  });

  it("parses durations in ms, s, m and h", () => {
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("5s")).toBe(5000);
    expect(parseDuration("1.5m")).toBe(90_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("5 seconds")).toBeUndefined();
  });

  it("documents every setting in the README table, exactly as the schema renders it", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(renderSettingsTable());
    for (const s of Object.values(SETTINGS)) expect(readme).toContain(`\`${s.env}\``);
  });

  it("lists every setting once in SETTING_NAMES, in schema order", () => {
    expect(SETTING_NAMES).toEqual(Object.keys(SETTINGS));
    expect(Object.isFrozen(SETTING_NAMES)).toBe(true);
  });

  it("names the reference variable and the unknown target when a mapping points at no setting", () => {
    const byEnv = new Map(SETTING_NAMES.map((n) => [SETTINGS[n].env, n]));
    expect(settingOfEnv(byEnv, "TOLLGATE_STORE", "REDIS_URL")).toBe("store");
    expect(() => settingOfEnv(byEnv, "TOLLGATE_NOPE", "REDIS_URL")).toThrow(
      new SettingsError(
        "REDIS_URL maps to TOLLGATE_NOPE, which is no setting's variable (a bug in the mapping)",
      ),
    );
  });

  it("types each parsed setting as its schema says: numbers, booleans, enum members, addresses", () => {
    const s = loadSettings(["--compat", "envoyproxy", "--grpc-addr", "[::1]:9000"], {});
    expect(s.grpcAddr).toEqual({ host: "::1", port: 9000 });
    expect(s.defaultAlgorithm).toBe("fixed_window");
    expect(Object.isFrozen(s)).toBe(true);
    const typeOf: Record<string, string> = {
      int: "number",
      duration: "number",
      bool: "boolean",
      addr: "object",
    };
    for (const name of SETTING_NAMES)
      expect(typeof s[name], name).toBe(typeOf[SETTINGS[name].kind] ?? "string");
  });
});
