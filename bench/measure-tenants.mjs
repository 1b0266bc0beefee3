// Load time and retained heap of a 200,000-row tenants file (docs/capacity.md, "Tiers").
// Run: npm run build && node --expose-gc bench/measure-tenants.mjs [rows]
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadTenants } from "../dist/config/tenants.js";

if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const rows = Number(process.argv[2] ?? 200_000);
const tiers = ["free", "pro", "gold", "enterprise"];
const knownTiers = new Set(tiers);
const tenant = (i) => `tenant-${i.toString(36).padStart(8, "0")}-${(i * 2654435761) % 1e9}`;
const dir = await mkdtemp(join(tmpdir(), "tollgate-tenants-"));

async function measure(name, text) {
  const path = join(dir, name);
  await writeFile(path, text);
  globalThis.gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const map = await loadTenants(path, { knownTiers });
  const ms = performance.now() - started;
  globalThis.gc();
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  if (map.size !== rows) throw new Error(`${name}: loaded ${map.size} of ${rows}`);
  const bytes = Buffer.byteLength(text);
  console.log(
    `${name}: ${rows} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB file, load ${ms.toFixed(0)} ms, retained heap ${heapMiB.toFixed(1)} MiB (${((heapMiB * 2 ** 20) / rows).toFixed(0)} B/tenant)`,
  );
  return map;
}

try {
  const ids = Array.from({ length: rows }, (_, i) => tenant(i));
  const tierOf = (i) => tiers[i % tiers.length];
  const csv = await measure(
    "tenants.csv",
    `tenant,tier\n${ids.map((t, i) => `${t},${tierOf(i)}`).join("\n")}\n`,
  );
  csv.clear();
  await measure("tenants.yaml", `${ids.map((t, i) => `${t}: ${tierOf(i)}`).join("\n")}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
