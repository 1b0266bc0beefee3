import { describe, expect, it } from "vitest";
import { classifyRedisError } from "../../../src/store/redis/errors.js";
import { StoreError } from "../../../src/store/store.js";

const errno = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("classifyRedisError", () => {
  it.each([
    [new Error("Command timed out"), "timeout", true],
    [new Error("Stream isn't writeable and enableOfflineQueue options is false"), "connection", true],
    [errno("connect ECONNREFUSED 127.0.0.1:1", "ECONNREFUSED"), "connection", true],
    [new Error("Connection is closed."), "connection", true],
    [
      new Error("Reached the max retries per request limit (which is 1). Refer to maxRetriesPerRequest"),
      "connection",
      true,
    ],
    [new Error("CLUSTERDOWN The cluster is down"), "cluster", true],
    [new Error("READONLY You can't write against a read only replica."), "cluster", true],
    [new Error("CROSSSLOT Keys in request don't hash to the same slot"), "cluster", false],
    [new Error("ERR Error running script (call to f_0): @user_script:3: bad"), "script", false],
    [new Error("WRONGPASS invalid username-password pair"), "auth", false],
    [new Error("self-signed certificate in certificate chain"), "tls", false],
    [new Error("OOM command not allowed when used memory > 'maxmemory'."), "oom", true],
    [new Error("BUSY Redis is busy running a script."), "busy", true],
    [new Error("LOADING Redis is loading the dataset in memory"), "busy", true],
    [new Error("WRONGTYPE Operation against a key holding the wrong kind of value"), "reply", false],
  ])("classifies %s", (err, code, transient) => {
    const e = classifyRedisError(err, "take");
    expect(e).toBeInstanceOf(StoreError);
    expect({ code: e.code, transient: e.transient }).toEqual({ code, transient });
    expect(e.cause).toBe(err);
    expect(e.message).toContain("redis take failed");
  });

  it("returns an already classified error unchanged", () => {
    const e = new StoreError("x", { code: "timeout", transient: true });
    expect(classifyRedisError(e, "take")).toBe(e);
  });
});
