// Rewrites the settings table in README.md (between the settings markers) from src/settings-schema.ts.
// Needs a build (dist/) first: `npm run build && npm run docs:settings`.
import { readFileSync, writeFileSync } from "node:fs";
import { renderSettingsTable } from "../dist/settings.js";

const readme = new URL("../README.md", import.meta.url);
const text = readFileSync(readme, "utf8");
const begin = "<!-- settings:begin -->";
const end = "<!-- settings:end -->";
const a = text.indexOf(begin);
const b = text.indexOf(end);
if (a < 0 || b < a) throw new Error(`README.md lacks the ${begin} … ${end} markers`);
writeFileSync(readme, `${text.slice(0, a + begin.length)}\n${renderSettingsTable()}\n${text.slice(b)}`);
console.log("README.md settings table updated");
