/**
 * Counters read around a load run: process CPU time from /proc/<pid>/stat and tollgate's Prometheus
 * counters from /metrics. Both are read before and after; the harness divides the deltas by requests.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux). */
const CLK_TCK = 100;

/** utime + stime of `pid`, in microseconds. */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / CLK_TCK;
}

/** Sum of CPU microseconds over several pids. */
export function cpuMicrosAll(pids) {
  return pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
}

/** The value of an unlabelled counter in tollgate's /metrics (0 when absent). */
export async function scrapeCounter(httpPort, name) {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}
