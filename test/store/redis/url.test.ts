import { describe, expect, it } from "vitest";
import { parseRedisUrl, RedisUrlError, redactUrl } from "../../../src/store/redis/url.js";

describe("parseRedisUrl", () => {
  it("reads host, port, database and credentials of a single node", () => {
    expect(parseRedisUrl("redis://app:s%40cret@cache.internal:6380/3")).toEqual({
      mode: "single",
      tls: false,
      host: "cache.internal",
      port: 6380,
      db: 3,
      username: "app",
      password: "s@cret",
    });
  });

  it("treats a lone userinfo token as a password, as redis-cli does", () => {
    const t = parseRedisUrl("redis://hunter2@h:1");
    expect(t).toMatchObject({ username: undefined, password: "hunter2", db: 0 });
  });

  it("marks rediss URLs as TLS", () => {
    expect(parseRedisUrl("rediss://h:6379")).toMatchObject({ mode: "single", tls: true });
  });

  it("accepts bracketed IPv6 hosts", () => {
    expect(parseRedisUrl("redis://[::1]:7000")).toMatchObject({ host: "::1", port: 7000 });
  });

  it("reads every sentinel and the master name", () => {
    expect(parseRedisUrl("redis-sentinel://s1:26379,s2:26380/mymaster")).toEqual({
      mode: "sentinel",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26380 },
      ],
      masterName: "mymaster",
      db: 0,
      username: undefined,
      password: undefined,
    });
  });

  it("reads every cluster seed", () => {
    expect(parseRedisUrl("redis-cluster://a:7000,b:7001,c:7002")).toMatchObject({
      mode: "cluster",
      seeds: [
        { host: "a", port: 7000 },
        { host: "b", port: 7001 },
        { host: "c", port: 7002 },
      ],
    });
  });

  it.each([
    ["http://h:1", "unknown scheme; use one of redis://"],
    ["redis://h", '"h" is not host:port (the port is required)'],
    ["redis://h:70000", "port 70000 is out of range 1-65535"],
    ["redis://h:1/x", 'database "x" is not a whole number'],
    ["redis://a:1,b:2", "one host only; for several nodes use redis-cluster:// or redis-sentinel://"],
    [
      "redis-sentinel://s:1",
      "the master name is missing; expected redis-sentinel://host:port,host:port/mastername",
    ],
    ["redis-cluster://a:1/0", "a cluster has no database or path"],
    ["redis://", "no host given; expected redis://[user:pass@]host:port[/db]"],
  ])("rejects %s with a precise reason", (url, reason) => {
    expect(() => parseRedisUrl(url)).toThrow(RedisUrlError);
    expect(() => parseRedisUrl(url)).toThrow(reason);
  });

  it("never repeats the password in its error messages", () => {
    expect(() => parseRedisUrl("redis://u:topsecret@h")).toThrow(/redis:\/\/u:\*\*\*@h/);
    expect(() => parseRedisUrl("redis://u:topsecret@h")).not.toThrow(/topsecret/);
  });
});

describe("redactUrl", () => {
  it("replaces the password and keeps the user", () => {
    expect(redactUrl("redis://app:pw@h:1/2")).toBe("redis://app:***@h:1/2");
  });

  it("replaces a lone password token", () => {
    expect(redactUrl("rediss://pw@h:1")).toBe("rediss://***@h:1");
  });

  it("leaves URLs without credentials unchanged", () => {
    expect(redactUrl("redis-cluster://a:1,b:2")).toBe("redis-cluster://a:1,b:2");
  });
});
