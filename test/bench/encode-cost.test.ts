/** bench/encode-cost.mjs (the merged EVALSHA encoder's CPU per request): prints one figure per round. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const script = fileURLToPath(new URL("../../bench/encode-cost.mjs", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));

describe("bench/encode-cost.mjs", () => {
  it("prints the encoder's CPU per request for each round and their minimum", async () => {
    const { stdout } = await run(process.execPath, [script, "--rounds", "3", "--batches", "50"], {
      cwd,
      timeout: 30_000,
    });
    const m =
      /^EVALSHA encoding, 128 requests of 3 takes per call: (\S+) (\S+) (\S+) µs CPU per request; min (\S+)$/m.exec(
        stdout,
      );
    const numbers = (m ?? []).slice(1).map(Number);
    expect(numbers).toHaveLength(4);
    for (const n of numbers) expect(n).toBeGreaterThanOrEqual(0);
    expect(numbers[3]).toBe(Math.min(...numbers.slice(0, 3)));
  });

  it("refuses a round count below one", async () => {
    await expect(run(process.execPath, [script, "--rounds", "0"], { cwd, timeout: 30_000 })).rejects.toThrow(
      /--rounds and --batches must be at least 1/,
    );
  });
});
