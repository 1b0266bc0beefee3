/** An RLQS session's config view compiled from one YAML document (fails the test on a problem). */
import { expect } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import type { ConfigProblem } from "../../src/config/errors.js";
import { FULL_SCHEMA } from "../../src/config/full-schema.js";
import { compileRlqs } from "../../src/config/sections/rlqs.js";
import type { RlqsConfigView } from "../../src/engine/rlqs/messages.js";
import { NO_TIERS } from "../../src/engine/tiers.js";

export function rlqsView(yaml: string): RlqsConfigView {
  const load = parseConfigText("edge.yaml", yaml, { schema: FULL_SCHEMA });
  const problems: ConfigProblem[] = [];
  const rlqs = compileRlqs(load.documents, problems);
  expect(problems).toEqual([]);
  return { rules: load.ruleSet, tiers: NO_TIERS, rlqs };
}
