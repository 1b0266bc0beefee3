import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createLogger, loggerOptionsOf, type PrettyLoader } from "../src/logger.js";
import { SettingsError } from "../src/settings-error.js";

/** A loader standing in for pino-pretty, counting its calls; its stream collects the lines. */
function fakePretty() {
  const lines: string[] = [];
  const load = vi.fn<PrettyLoader>(async () => ({
    PinoPretty: () =>
      new Writable({
        write(chunk, _enc, done) {
          lines.push(`pretty: ${String(chunk).trim()}`);
          done();
        },
      }),
  }));
  return { load, lines };
}

const missing: PrettyLoader = () => Promise.reject(new Error("Cannot find package 'pino-pretty'"));

describe("createLogger and pino-pretty", () => {
  it("never loads pino-pretty for JSON logs", async () => {
    const { load } = fakePretty();
    await createLogger(loggerOptionsOf({ logLevel: "info", logFormat: "json" }), load);
    await createLogger({ level: "info", pretty: false }, load);
    expect(load).not.toHaveBeenCalled();
  });

  it("loads it when pretty logs are asked for, and writes through it", async () => {
    const { load, lines } = fakePretty();
    const logger = await createLogger(loggerOptionsOf({ logLevel: "info", logFormat: "pretty" }), load);
    logger.info("hello");
    expect(load).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"msg":"hello"');
  });

  it("refuses pretty logs without pino-pretty, naming the package and the fix", async () => {
    const err = await createLogger({ level: "info", pretty: true }, missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SettingsError);
    expect(String(err)).toMatch(/--log-format pretty needs the optional package pino-pretty/);
    expect(String(err)).toMatch(/Cannot find package 'pino-pretty'/);
    expect(String(err)).toMatch(/npm install pino-pretty\) or use --log-format json/);
  });

  it("falls back to JSON on a TTY (--log-format auto) without pino-pretty", async () => {
    const tty = process.stdout.isTTY;
    process.stdout.isTTY = true;
    try {
      const logger = await createLogger(loggerOptionsOf({ logLevel: "warn", logFormat: "auto" }), missing);
      expect(logger.level).toBe("warn");
    } finally {
      process.stdout.isTTY = tty;
    }
  });
});
