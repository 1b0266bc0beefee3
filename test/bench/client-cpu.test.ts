/**
 * bench/client-cpu.mjs (the store stack's client CPU per decision, no HTTP/2): it runs on the
 * in-process store and on its own redis-server, answers every decision, prints one line with a
 * number per round, and refuses bad flags.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const script = fileURLToPath(new URL("../../bench/client-cpu.mjs", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));

describe("bench/client-cpu.mjs", () => {
  it.each(["memory", "redis"])("measures the %s store: one CPU figure per round", async (store) => {
    const args = [script, "--store", store, "--inflight", "8", "--turns", "5", "--rounds", "2"];
    const { stdout } = await run(process.execPath, args, { cwd, timeout: 60_000 });
    const m = /^(\w+), 8 in flight per turn: (\S+) (\S+) µs CPU per decision; min (\S+), median (\S+)$/m.exec(
      stdout,
    );
    expect(m?.[1]).toBe(store);
    const numbers = (m ?? []).slice(2).map(Number);
    expect(numbers).toHaveLength(4);
    for (const n of numbers) expect(n).toBeGreaterThan(0);
    expect(numbers[2]).toBe(Math.min(numbers[0] as number, numbers[1] as number));
  });

  it("refuses an unknown store", async () => {
    await expect(
      run(process.execPath, [script, "--store", "mongo"], { cwd, timeout: 30_000 }),
    ).rejects.toThrow(/--store must be one of memory, redis, cluster/);
  });
});
