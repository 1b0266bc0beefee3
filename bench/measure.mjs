/**
 * Counters read around a load run: process CPU time from /proc/<pid>/stat and tollgate's Prometheus
 * counters from /metrics. Both are read before and after; the harness divides the deltas by requests.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux). */
const CLK_TCK = 100;

/** utime + stime of `pid`, in microseconds. */
export function cpuMicros(pid) {
  return statCpuMicros(`/proc/${pid}/stat`);
}

/** utime + stime in a /proc stat file (a process's, or one thread's under task/), in microseconds. */
function statCpuMicros(file) {
  const stat = readFileSync(file, "utf8");
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / CLK_TCK;
}

/** `pid` and its descendants (a `--workers` primary and its workers), from /proc/<pid>/task/<tid>/children. */
export function processTree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    for (const tid of readdirSync(`/proc/${out[i]}/task`)) {
      const text = readFileSync(`/proc/${out[i]}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(" ").map(Number));
    }
  }
  return out;
}

/** CPU microseconds of `pid` and its descendants. */
export function cpuMicrosTree(pid) {
  return cpuMicrosAll(processTree(pid));
}

/**
 * CPU microseconds of the main thread of `pid` and of each descendant: where Node runs JavaScript
 * (the thread whose id is the pid). The rest of a process's time is V8's and libuv's helper threads.
 */
export function mainThreadMicrosTree(pid) {
  return processTree(pid).reduce((sum, p) => sum + statCpuMicros(`/proc/${p}/task/${p}/stat`), 0);
}

/** Busy CPU microseconds of the whole machine, all CPUs (user, nice, system, irq, softirq of /proc/stat). */
export function machineBusyMicros() {
  const [line = ""] = readFileSync("/proc/stat", "utf8").split("\n", 1);
  const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq) * 1e6) / CLK_TCK;
}

/** Sum of CPU microseconds over several pids. */
export function cpuMicrosAll(pids) {
  return pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
}

/** tollgate's /metrics text. */
export async function scrape(httpPort) {
  return (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
}

/** Sum of every series of metric `name` (labelled or not) in a Prometheus text exposition. */
export function sumOf(text, name) {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** The tollgate counters a run reports, or zeros for a baseline (no /metrics). */
export async function tollgateCounters(httpPort) {
  if (!httpPort) return { roundTrips: 0, storeErrors: 0, degraded: 0 };
  const text = await scrape(httpPort);
  return {
    roundTrips: sumOf(text, "tollgate_store_round_trips_total"),
    storeErrors: sumOf(text, "tollgate_store_errors_total"),
    degraded: sumOf(text, "tollgate_degraded"),
  };
}
