/**
 * tollgate's version, read once from package.json (the one place it is written): `--version`, the
 * `tollgate_build_info` metric and the CHANGELOG test use it. From src/ (tests) and dist/ (the
 * build, the image and the npm package) package.json is one directory up.
 */
import { readFileSync } from "node:fs";

/** The `version` of tollgate's package.json, e.g. `0.1.0`. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
