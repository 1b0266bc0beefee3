/**
 * Spawn private redis-server processes for tests: a single node or a small Redis Cluster, each on
 * free ports, killed by pid afterwards. Never touches the developer's Redis on 127.0.0.1:6379.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";

/** `execFile` as a promise (for redis-cli and openssl). */
export const execFileAsync = promisify(execFile);
const FORBIDDEN_PORT = 6379;
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A redis-server owned by the test that started it. */
export interface RedisServer {
  readonly port: number;
  /** Pid of the current process (changes after `restart()`). */
  readonly pid: number;
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  /** A new ioredis client to this server (closed by `stop()` if still open). */
  client(): Redis;
  /** Kill the server (SIGKILL) and remove its temp dir; idempotent. */
  stop(): Promise<void>;
  /** Send a signal to the server process and wait for it to exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Kill the server and start a fresh (empty) one on the same port. */
  restart(): Promise<void>;
}

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. `["--maxmemory", "10mb"]`. */
  readonly args?: readonly string[];
  /** Port to use; default a free one (the cluster bus needs `port + 10000` free too). */
  readonly port?: number;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port in 20000–54999 that is free, and whose cluster bus port (+10000) is free too. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (port === FORBIDDEN_PORT) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) return port;
  }
  throw new Error("no free port pair found for redis-server");
}

/** Resolve when the child process has exited. */
export function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Wait until `redis-cli [cliArgs] -p PORT PING` answers PONG; fail if the child exits first. */
export async function waitPing(
  port: number,
  child: ChildProcess,
  cliArgs: readonly string[] = [],
): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited (${child.exitCode})`);
    try {
      const { stdout } = await execFileAsync("redis-cli", [...cliArgs, "-p", String(port), "PING"], {
        timeout: 1000,
      });
      if (stdout.trim() === "PONG") return;
    } catch {
      // not up yet
    }
    await delay(50);
  }
  throw new Error(`redis-server on port ${port} did not answer PING`);
}

function spawnServer(port: number, dir: string, args: readonly string[]): ChildProcess {
  if (port === FORBIDDEN_PORT) throw new Error("tests must never use port 6379");
  const argv = ["--port", String(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"];
  argv.push("--dir", dir, ...args);
  return spawn("redis-server", argv, { stdio: "ignore" });
}

/** Start one private redis-server and wait until it answers PING. */
export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const args = opts.args ?? [];
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), `tollgate-redis-${port}-`));
  let child = spawnServer(port, dir, args);
  const clients: Redis[] = [];
  let stopped = false;
  try {
    await waitPing(port, child);
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const kill = async (signal: NodeJS.Signals) => {
    const c = child;
    c.kill(signal);
    await waitExit(c);
  };
  return {
    port,
    get pid() {
      return child.pid ?? -1;
    },
    url: `redis://127.0.0.1:${port}`,
    client() {
      const c = new Redis({ port, host: "127.0.0.1", lazyConnect: false, maxRetriesPerRequest: 1 });
      // Tests kill and restart servers on purpose: reconnect errors are expected, not news.
      c.on("error", () => {});
      clients.push(c);
      return c;
    },
    kill,
    async restart() {
      await kill("SIGKILL");
      child = spawnServer(port, dir, args);
      await waitPing(port, child);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const c of clients) c.disconnect();
      await kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private Redis Cluster (masters, and replicas when asked for). */
export interface RedisCluster {
  readonly ports: readonly number[];
  readonly pids: readonly number[];
  /** `redis://127.0.0.1:PORT` per node (masters first, as `redis-cli --cluster create` assigns). */
  readonly urls: readonly string[];
  /** `redis-cluster://127.0.0.1:P1,127.0.0.1:P2,…`. */
  readonly url: string;
  readonly nodes: readonly RedisServer[];
  stop(): Promise<void>;
}

async function clusterOk(port: number): Promise<boolean> {
  try {
    const { stdout } = await execFileAsync("redis-cli", ["-p", String(port), "CLUSTER", "INFO"], {
      timeout: 1000,
    });
    return stdout.includes("cluster_state:ok");
  } catch {
    return false;
  }
}

/** Wait until every node on `ports` reports cluster_state:ok (e.g. after a failover). */
export async function waitClusterOk(ports: readonly number[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const states = await Promise.all(ports.map((p) => clusterOk(p)));
    if (states.every(Boolean)) return;
    await delay(50);
  }
  throw new Error(`cluster on ports ${ports.join(",")} did not reach cluster_state:ok`);
}

/**
 * Wait until every node of `ports` sees the same shape: `masters` masters serving slots, each with
 * `replicas` replicas. Right after `redis-cli --cluster create` a node may still list a replica-to-be
 * as a master without slots (gossip has not carried the `CLUSTER REPLICATE` yet), even with
 * cluster_state:ok everywhere; a failover test that picks its victim then can find no replica of it.
 */
export async function waitClusterShape(
  ports: readonly number[],
  masters: number,
  replicas: number,
  timeoutMs = 20_000,
): Promise<void> {
  const settled = async (port: number) => {
    const nodes = await clusterNodes(port).catch(() => []);
    const serving = nodes.filter((n) => n.role === "master" && n.slots.length > 0);
    return (
      nodes.length === ports.length &&
      serving.length === masters &&
      serving.every((m) => nodes.filter((n) => n.masterId === m.id).length === replicas)
    );
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await Promise.all(ports.map(settled))).every(Boolean)) return;
    await delay(50);
  }
  throw new Error(
    `cluster on ports ${ports.join(",")} did not settle to ${masters} masters × ${replicas} replicas`,
  );
}

/** Shape of a test cluster. */
export interface StartClusterOptions {
  readonly masters: number;
  /** Replicas per master (for failover tests). @default 0 */
  readonly replicas?: number;
  /** `cluster-node-timeout`: how long a master may be unreachable before a failover. @default 2000 (ms) */
  readonly nodeTimeoutMs?: number;
}

/**
 * Start cluster-enabled servers, create the cluster and wait for cluster_state:ok on all (and, with
 * replicas, until every node sees each master's replicas).
 */
export async function startCluster(opts: StartClusterOptions = { masters: 3 }): Promise<RedisCluster> {
  const replicas = opts.replicas ?? 0;
  const nodes: RedisServer[] = [];
  const confDir = mkdtempSync(join(tmpdir(), "tollgate-cluster-"));
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(confDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < opts.masters * (1 + replicas); i++) {
      const port = await freePort();
      const args = ["--cluster-enabled", "yes", "--cluster-config-file", join(confDir, `nodes-${port}.conf`)];
      args.push("--cluster-node-timeout", String(opts.nodeTimeoutMs ?? 2000));
      nodes.push(await startRedis({ port, args }));
    }
    const addrs = nodes.map((n) => `127.0.0.1:${n.port}`);
    await execFileAsync(
      "redis-cli",
      ["--cluster", "create", ...addrs, "--cluster-replicas", String(replicas), "--cluster-yes"],
      {
        timeout: 20_000,
      },
    );
    await waitClusterOk(nodes.map((n) => n.port));
    if (replicas > 0)
      await waitClusterShape(
        nodes.map((n) => n.port),
        opts.masters,
        replicas,
      );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports: nodes.map((n) => n.port),
    get pids() {
      return nodes.map((n) => n.pid);
    },
    urls: nodes.map((n) => n.url),
    url: `redis-cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(",")}`,
    nodes,
    stop,
  };
}

/** Keys without a TTL on one node (SCAN + PTTL); `[]` means every key expires. */
export async function keysWithoutTtl(client: Redis): Promise<string[]> {
  const bad: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      if ((await client.pttl(key)) === -1) bad.push(key);
    }
  } while (cursor !== "0");
  return bad;
}

/** One line of `CLUSTER NODES`, as far as failover tests need it. */
export interface ClusterNodeInfo {
  readonly id: string;
  readonly port: number;
  readonly role: "master" | "replica";
  /** Id of the master this node replicates; `undefined` for a master. */
  readonly masterId: string | undefined;
  /** Whether the node is flagged `fail` or `fail?` by the node asked. */
  readonly failing: boolean;
  /** Slot ranges `[first, last]` served by a master. */
  readonly slots: readonly (readonly [number, number])[];
}

/** Parse `CLUSTER NODES` as seen by the node on `port`. */
export async function clusterNodes(port: number): Promise<ClusterNodeInfo[]> {
  const { stdout } = await execFileAsync("redis-cli", ["-p", String(port), "CLUSTER", "NODES"], {
    timeout: 1000,
  });
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [id = "", addr = "", flags = "", master = "-", , , , , ...slots] = line.trim().split(" ");
      const role = flags.split(",").includes("master") ? "master" : "replica";
      return {
        id,
        port: Number(/:(\d+)@/.exec(addr)?.[1] ?? -1),
        role,
        masterId: master === "-" ? undefined : master,
        failing: /(^|,)fail\??(,|$)/.test(flags),
        slots: slots
          .filter((s) => /^\d+(-\d+)?$/.test(s))
          .map((s) => {
            const [first, last] = s.split("-").map(Number);
            return [first ?? 0, last ?? first ?? 0] as const;
          }),
      };
    });
}

/** The node (of `cluster`) replicating the master on `masterPort`, as `asked` sees the cluster. */
export async function replicaOf(
  cluster: RedisCluster,
  masterPort: number,
  asked: number = masterPort,
): Promise<RedisServer> {
  const nodes = await clusterNodes(asked);
  const master = nodes.find((n) => n.port === masterPort);
  const replica = nodes.find((n) => n.masterId !== undefined && n.masterId === master?.id);
  const server = cluster.nodes.find((n) => n.port === replica?.port);
  if (!server) throw new Error(`no replica of the master on port ${masterPort}`);
  return server;
}

/** One call of a `steadyCalls` stream: which loop made it, when it started and ended, and whether it succeeded. */
export interface StreamCall {
  readonly label: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly ok: boolean;
  /** The failed call's error message (undefined when it succeeded). */
  readonly error?: string;
}

/** A running set of call loops (see `steadyCalls`). */
export interface CallStream {
  /** Calls finished so far. */
  readonly log: readonly StreamCall[];
  /** Stop every loop after its current call and return the whole log. */
  stop(): Promise<readonly StreamCall[]>;
}

/**
 * Run one sequential loop per label, each calling its function again `gapMs` after the last call
 * settled, until `stop()` or `maxMs` (a safety bound: every loop ends by itself). Times are
 * `performance.now()` milliseconds. For failover tests: traffic keeps flowing while a node dies.
 */
export function steadyCalls(opts: {
  readonly calls: Readonly<Record<string, () => Promise<unknown>>>;
  readonly gapMs: number;
  readonly maxMs: number;
}): CallStream {
  const log: StreamCall[] = [];
  const endBy = performance.now() + opts.maxMs;
  let stopped = false;
  const loops = Object.entries(opts.calls).map(async ([label, call]) => {
    while (!stopped && performance.now() < endBy) {
      const startedAt = performance.now();
      const error = await call().then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      log.push({ label, startedAt, endedAt: performance.now(), ok: error === undefined, error });
      await delay(opts.gapMs);
    }
  });
  return {
    log,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return log;
    },
  };
}

/** How calls of `label` that started at or after `since` fared. */
export interface OutageSummary {
  readonly calls: number;
  readonly failures: number;
  /**
   * From `since` to the end of the first successful call after the last failure; 0 when no call failed.
   * Milliseconds.
   */
  readonly recoveredAfterMs: number;
  /** Whether the last call of the label succeeded (it serves again). */
  readonly servingAtEnd: boolean;
  /** The failed calls' error messages, with their start in ms after `since`. */
  readonly errors: readonly string[];
}

/** Summarise a stream log for one label since an event (e.g. the moment a master was killed). */
export function outage(log: readonly StreamCall[], label: string, since: number): OutageSummary {
  const calls = log.filter((c) => c.label === label && c.startedAt >= since);
  const lastFailure = calls.map((c) => !c.ok).lastIndexOf(true);
  const recovery = lastFailure === -1 ? undefined : calls.slice(lastFailure + 1).find((c) => c.ok);
  return {
    calls: calls.length,
    failures: calls.filter((c) => !c.ok).length,
    errors: calls.filter((c) => !c.ok).map((c) => `+${(c.startedAt - since).toFixed(0)}ms ${c.error ?? ""}`),
    recoveredAfterMs: lastFailure === -1 ? 0 : recovery ? recovery.endedAt - since : Number.POSITIVE_INFINITY,
    servingAtEnd: calls.at(-1)?.ok ?? false,
  };
}
