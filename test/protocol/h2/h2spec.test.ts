/**
 * h2spec 2.0.0 (the HTTP/2 server conformance suite, 146 cases) against the built CLI, h2c, on both gRPC
 * transports. The own transport must pass all 146; node:http2 must pass at least its 138, and every
 * case it does not pass must be one of nghttp2's known ones below.
 *
 * The binary: $H2SPEC, else ../shared/tools/h2spec/h2spec next to the repository (.ci/run exports
 * H2SPEC when that file exists). Without it the cases are skipped with the reason in their name;
 * under CI=true with H2SPEC set, a missing binary is a failure.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type Service, startService } from "../../helpers/service.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const FALLBACK = resolve(ROOT, "../shared/tools/h2spec/h2spec");
const CONFIG = join(ROOT, "config");
const TOTAL = 146;

/**
 * What node:http2 (nghttp2 1.6x under Node 20) does not pass, and why: its behaviour, not tollgate's.
 * A failure outside this list, or fewer than 138 passed, fails the test.
 */
const NODE_KNOWN: Readonly<Record<string, string>> = {
  "http2/5.1/8":
    "DATA after the client's RST_STREAM: nghttp2 drops frames on a stream it no longer keeps instead of STREAM_CLOSED",
  "http2/5.1/9":
    "HEADERS after the client's RST_STREAM: nghttp2 drops frames on a stream it no longer keeps instead of STREAM_CLOSED",
  "http2/5.1/11":
    "DATA on a stream closed by both END_STREAMs: nghttp2 ignores it (RFC 9113 leaves the connection error a MAY)",
  "http2/5.1/12":
    "HEADERS on a stream closed by both END_STREAMs: nghttp2 ignores it (RFC 9113 leaves the connection error a MAY)",
  "http2/5.1.1/2":
    "HEADERS on a stream id lower than one already opened: nghttp2 treats the id as closed and ignores it instead of PROTOCOL_ERROR",
  "http2/5.1.2/1":
    "skipped by h2spec: node:http2 announces no SETTINGS_MAX_CONCURRENT_STREAMS, so there is no limit to exceed",
  "http2/6.7/2":
    "a PING with ACK the server never asked for: nghttp2 reports a protocol error and node:http2 ends the session instead of ignoring it",
  "http2/6.9.1/2":
    "connection window past 2^31-1: nghttp2 sees the FLOW_CONTROL_ERROR but node:http2 ends the session with GOAWAY NO_ERROR",
};
/**
 * node:http2's cases that pass or fail from run to run (measured on an idle machine: http2/6.1/2
 * failed 4 of 15 single runs; over 8 full runs 6.1/2 failed twice and 5.1/6 once). They count towards
 * the 138 either way; any other failure is a regression.
 */
const NODE_RACY: Readonly<Record<string, string>> = {
  "http2/5.1/6":
    "DATA on a half-closed (remote) stream node:http2 has already answered: when the answer's END_STREAM goes out before nghttp2 reads the DATA, the stream is closed and the DATA ignored instead of STREAM_CLOSED",
  "http2/6.1/2":
    "DATA after END_STREAM on a request node:http2 has already answered: when the answer's END_STREAM goes out before nghttp2 reads the DATA, the stream is closed and the DATA ignored instead of STREAM_CLOSED",
};
const NODE_MIN_PASSED = 138;

/** One h2spec case as its JUnit report tells it. */
interface CaseResult {
  /** `package/index`, the id h2spec takes on its command line (e.g. `http2/5.1/8`). */
  readonly id: string;
  readonly title: string;
  readonly status: "passed" | "failed" | "skipped";
  readonly detail: string;
}

/**
 * h2spec's JUnit XML, read with patterns: its error texts embed frame payloads (raw control bytes) that
 * make the file invalid XML for a strict parser.
 */
function parseJunit(xml: string): CaseResult[] {
  const out: CaseResult[] = [];
  for (const suite of xml.matchAll(/<testsuite\b[^>]*\bpackage="([^"]+)"[^>]*>([\s\S]*?)<\/testsuite>/g)) {
    let index = 0;
    for (const tc of (suite[2] ?? "").matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
      index++;
      const body = tc[2] ?? "";
      const status = /<skipped/.test(body) ? "skipped" : /<(error|failure)/.test(body) ? "failed" : "passed";
      out.push({
        id: `${suite[1]}/${index}`,
        title: /classname="([^"]*)"/.exec(tc[1] ?? "")?.[1] ?? "",
        status,
        detail: body.replace(/<[^>]+>/g, "").trim(),
      });
    }
  }
  return out;
}

function findBinary(): { path: string } | { missing: string } {
  const fromEnv = process.env.H2SPEC;
  const path = fromEnv !== undefined && fromEnv !== "" ? fromEnv : FALLBACK;
  try {
    accessSync(path, constants.X_OK);
    return { path };
  } catch {
    return {
      missing:
        fromEnv !== undefined && fromEnv !== ""
          ? `H2SPEC=${fromEnv} is not an executable file`
          : `no h2spec binary: H2SPEC is unset and ${FALLBACK} does not exist`,
    };
  }
}

const scratch = mkdtempSync(join(tmpdir(), "tollgate-h2spec-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run h2spec (`ids`, or every case) against 127.0.0.1:`port`; its JUnit report, parsed. */
function h2spec(
  binary: string,
  port: number,
  ids: readonly string[],
  timeoutS: number,
): Promise<CaseResult[]> {
  const report = join(scratch, `report-${port}-${Date.now()}.xml`);
  const args = ["-h", "127.0.0.1", "-p", String(port), "-o", String(timeoutS), "-j", report, ...ids];
  return new Promise((done, fail) => {
    // h2spec exits 1 when a case fails: the report is what counts.
    execFile(binary, args, { timeout: 150_000, maxBuffer: 16 << 20 }, (err, stdout) => {
      let xml: string;
      try {
        xml = readFileSync(report, "latin1");
      } catch {
        fail(new Error(`h2spec wrote no report (${String(err)}):\n${stdout}`));
        return;
      }
      const results = parseJunit(xml);
      if (results.length === 0) fail(new Error(`h2spec report without cases:\n${stdout}`));
      else done(results);
    });
  });
}

/**
 * The serving transport under h2spec. A case that fails is run again alone (a loaded machine): once
 * on the own transport, up to 4 times on node:http2, whose cases on a stream it has already answered
 * (5.1/5, 5.1/6, 6.1/2, …) race its answer's END_STREAM against the client's next frame and fail about
 * one run in four on an idle machine. A case counts as passed if any run passes it; a real regression
 * fails every run.
 */
async function conformance(binary: string, transport: "tollgate" | "node"): Promise<CaseResult[]> {
  let svc: Service | undefined;
  try {
    svc = await startService({ config: CONFIG, args: ["--grpc-transport", transport] });
    // Per-case timeout: 3 s for the own transport; node:http2's known failures each wait it out, so 2 s.
    const results = new Map(
      (await h2spec(binary, svc.grpcPort, [], transport === "node" ? 2 : 3)).map((r) => [r.id, r]),
    );
    const known = transport === "node" ? { ...NODE_KNOWN, ...NODE_RACY } : {};
    const failing = () =>
      [...results.values()].filter((r) => r.status === "failed" && known[r.id] === undefined);
    for (let attempt = 0; attempt < (transport === "node" ? 4 : 1); attempt++) {
      const again = failing();
      if (again.length === 0 || again.length > 10) break;
      console.warn(`h2spec (${transport}): ran ${again.map((r) => r.id).join(", ")} again after a failure`);
      // One id per run: a report numbers its cases from 1 within each section, so a case run alone
      // comes back as `…/1` whatever its id; the id asked for is the one it answers.
      for (const id of again.map((r) => r.id)) {
        const alone = await h2spec(binary, svc.grpcPort, [id], 10);
        if (alone.length !== 1 || alone[0] === undefined)
          throw new Error(`h2spec ${id}: ${alone.length} results`);
        results.set(id, { ...alone[0], id });
      }
    }
    return [...results.values()];
  } finally {
    await svc?.stop();
  }
}

const summary = (results: readonly CaseResult[]): string =>
  results
    .filter((r) => r.status !== "passed")
    .map((r) => `${r.id} (${r.status}) ${r.title}: ${r.detail.replace(/\s+/g, " ").slice(0, 200)}`)
    .join("\n");

const found = findBinary();

describe("h2spec conformance (h2c)", () => {
  if ("missing" in found) {
    if (process.env.CI === "true" && process.env.H2SPEC) {
      it("finds the h2spec binary CI names", () => {
        throw new Error(`${found.missing}: CI must run h2spec`);
      });
      return;
    }
    console.warn(`h2spec conformance NOT RUN: ${found.missing}`);
    it.skip(`NOT RUN (${found.missing}); set H2SPEC=/path/to/h2spec`, () => {});
    return;
  }
  const binary = found.path;

  it("own transport (--grpc-transport tollgate): 146/146", { timeout: 180_000 }, async () => {
    const results = await conformance(binary, "tollgate");
    expect(results).toHaveLength(TOTAL);
    expect(summary(results)).toBe("");
  });

  it(
    "node:http2 (--grpc-transport node): at least 138, failing only nghttp2's known cases",
    {
      timeout: 180_000,
    },
    async () => {
      const results = await conformance(binary, "node");
      expect(results).toHaveLength(TOTAL);
      const expected = (r: CaseResult) => NODE_KNOWN[r.id] !== undefined || NODE_RACY[r.id] !== undefined;
      const unexpected = results.filter((r) => r.status !== "passed" && !expected(r));
      expect(summary(unexpected)).toBe("");
      const passedOrRacy = results.filter((r) => r.status === "passed" || NODE_RACY[r.id] !== undefined);
      expect(passedOrRacy.length).toBeGreaterThanOrEqual(NODE_MIN_PASSED);
    },
  );
});

describe("h2spec's JUnit report", () => {
  it("reads ids, statuses and details, control bytes included", () => {
    const xml = `<?xml version="1.0"?><testsuites>
  <testsuite name="6.7. PING" package="http2/6.7" id="6.7" tests="3">
    <testcase package="http2/6.7" classname="Sends a PING frame" time="0.0012"></testcase>
    <testcase package="http2/6.7" classname="Sends a PING frame with ACK" time="0.0014">
      <error>PING Frame (opaque_data:h2spec\u0000\u0000)
Connection closed</error>
    </testcase>
    <testcase package="http2/6.7" classname="Skipped one"><skipped></skipped></testcase>
  </testsuite></testsuites>`;
    expect(parseJunit(xml).map((r) => [r.id, r.status])).toEqual([
      ["http2/6.7/1", "passed"],
      ["http2/6.7/2", "failed"],
      ["http2/6.7/3", "skipped"],
    ]);
    expect(parseJunit(xml)[1]?.detail).toContain("Connection closed");
  });
});
