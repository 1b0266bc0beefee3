// Fails when src/gen/ differs from what `buf generate` produces from proto/ (generated-code drift).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), "tollgate-gen-"));
const template = readFileSync(join(root, "buf.gen.yaml"), "utf8").replace("out: src/gen", `out: ${out}`);
const templateFile = join(out, "buf.gen.yaml");
writeFileSync(templateFile, template);
execFileSync(join(root, "node_modules/.bin/buf"), ["generate", "--template", templateFile], {
  cwd: root,
  stdio: "inherit",
});

function list(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) files.push(join(entry.parentPath, entry.name));
  }
  return files.map((f) => relative(dir, f)).sort();
}

const want = list(out);
const have = list(join(root, "src/gen"));
const problems = [];
for (const f of want) {
  if (!have.includes(f)) problems.push(`missing: src/gen/${f}`);
  else if (readFileSync(join(out, f), "utf8") !== readFileSync(join(root, "src/gen", f), "utf8"))
    problems.push(`differs: src/gen/${f}`);
}
for (const f of have) if (!want.includes(f)) problems.push(`stale: src/gen/${f}`);
rmSync(out, { recursive: true, force: true });
if (problems.length > 0) {
  console.error(`generated code drifted from proto/ (run \`npm run gen\`):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`src/gen is up to date (${want.length} files)`);
