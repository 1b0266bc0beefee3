/**
 * Runs the built CLI (`dist/cli.js serve`) as a child process on free ports (port 0) and reads the
 * bound addresses from its "tollgate ready" log line. Killed by pid in `stop()`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

export interface Service {
  readonly proc: ChildProcess;
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly grpcAddress: string;
  /** The debug listener's port (`--debug-addr`), when one was asked for. */
  readonly debugPort: number | undefined;
  /** Every stdout/stderr line so far. */
  readonly output: string[];
  http(path: string, init?: RequestInit): Promise<Response>;
  /** GET `path` on the debug listener (fails when there is none). */
  debug(path: string): Promise<Response>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartServiceOptions {
  readonly config: string;
  /**
   * Run this instead of `node dist/cli.js serve --config … --store … --grpc-addr 127.0.0.1:0 …`, with
   * exactly `exec.env` as the environment (the options' config, store, args and env are not used).
   */
  readonly exec?: {
    readonly file: string;
    readonly args: readonly string[];
    readonly env: NodeJS.ProcessEnv;
  };
  readonly store?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** @default 20000 */
  readonly timeoutMs?: number;
}

export function startService(opts: StartServiceOptions): Promise<Service> {
  const serve = [
    CLI,
    "serve",
    "--config",
    opts.config,
    "--store",
    opts.store ?? "memory",
    "--grpc-addr",
    "127.0.0.1:0",
    "--http-addr",
    "127.0.0.1:0",
    ...(opts.args ?? []),
  ];
  const proc = spawn(opts.exec?.file ?? process.execPath, opts.exec?.args ?? serve, {
    env: opts.exec?.env ?? { ...process.env, TOLLGATE_LOG_LEVEL: "info", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`service did not become ready:\n${output.join("\n")}`));
    }, opts.timeoutMs ?? 20_000);
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        output.push(line);
        if (!line.includes('"tollgate ready"')) continue;
        const ready = JSON.parse(line) as { grpc: string; http: string; debug?: string };
        const grpcPort = Number(ready.grpc.split(":").pop());
        const httpPort = Number(ready.http.split(":").pop());
        const debugPort = ready.debug === undefined ? undefined : Number(ready.debug.split(":").pop());
        clearTimeout(timer);
        resolve({
          proc,
          grpcPort,
          httpPort,
          grpcAddress: `127.0.0.1:${grpcPort}`,
          debugPort,
          output,
          exited,
          http: (path, init) => fetch(`http://127.0.0.1:${httpPort}${path}`, init),
          debug: (path) =>
            debugPort === undefined
              ? Promise.reject(new Error("the service has no debug listener (--debug-addr)"))
              : fetch(`http://127.0.0.1:${debugPort}${path}`),
          async stop(signal = "SIGTERM") {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
            const code = await exited;
            clearTimeout(t);
            return code;
          },
        });
      }
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before ready:\n${output.join("\n")}${buffered}`));
    });
  });
}

/** Run the CLI to completion (check / explain). */
export function runCli(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    proc.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    proc.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}
