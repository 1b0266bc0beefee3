import { describe, expect, it, vi } from "vitest";

// As if pino-pretty were not installed (`npm ci --omit=optional`): any import of it fails.
vi.mock("pino-pretty", () => {
  throw new Error("pino-pretty is not installed");
});

describe("the production import path without pino-pretty", () => {
  it("imports serve and logs JSON; pretty logs fail with the setting named", async () => {
    await import("../src/serve.js");
    const { createLogger } = await import("../src/logger.js");
    const logger = await createLogger({ level: "info", pretty: false });
    expect(logger.level).toBe("info");
    await expect(createLogger({ level: "info", pretty: true })).rejects.toThrow(
      /--log-format pretty needs the optional package pino-pretty/,
    );
  });
});
