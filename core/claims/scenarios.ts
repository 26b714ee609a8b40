import * as z from "zod";
import { ClaimSchema, ClaimTextSchema } from "./claim.ts";
import { SourceFileError, parseYamlSource, validateYaml } from "./yaml-source.ts";
import type { Claim } from "./claim.ts";

/** Outcomes a scenario can expect: a kernel verdict, or that the claim ends in human review. */
export const ExpectedOutcomeSchema = z.enum(["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"]);

/** An expected outcome. */
export type ExpectedOutcome = z.infer<typeof ExpectedOutcomeSchema>;

const ExpectedSchema = z.union([
  ExpectedOutcomeSchema,
  z.object({ verdict: ExpectedOutcomeSchema, reason_code: z.string().min(1).optional() }).strict(),
]);

const ScenarioRowSchema = z
  .object({
    id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "ids hold letters, digits, _ and -"),
    label: z.string().min(1),
    context: z.union([
      z.object({ claim: ClaimSchema }).strict(),
      z.object({ claim_text: ClaimTextSchema }).strict(),
    ], { message: "context needs exactly one of claim (structured) or claim_text (free text)" }),
    expected: ExpectedSchema,
  })
  .strict();

/** Schema of `scenarios/scenarios.yaml` (SPEC §6). */
export const ScenarioFileSchema = z.object({ scenarios: z.array(ScenarioRowSchema).min(1, "no scenarios") }).strict();

/** One scenario, normalised. */
export interface Scenario {
  id: string;
  label: string;
  input: { claim: Claim } | { claim_text: string };
  expected: { verdict: ExpectedOutcome; reason_code?: string };
}

/** Parses and validates scenario YAML text. Throws `SourceFileError` naming file, row and field. */
export function parseScenarios(text: string, file: string): Scenario[] {
  const source = parseYamlSource(text, file);
  const rows = (source.value as { scenarios?: { id?: unknown }[] } | null)?.scenarios;
  const parsed = validateYaml(source, ScenarioFileSchema, (path) => {
    if (path[0] !== "scenarios" || typeof path[1] !== "number") return undefined;
    const id = Array.isArray(rows) ? rows[path[1]]?.id : undefined;
    return typeof id === "string" ? id : `#${path[1] + 1}`;
  });
  const seen = new Map<string, number>();
  parsed.scenarios.forEach((row, i) => {
    const previous = seen.get(row.id);
    if (previous !== undefined) {
      throw new SourceFileError(file, [{ file, line: source.lineOf(["scenarios", i, "id"]), row: row.id, field: `scenarios[${i}].id`, message: `duplicate id (also row #${previous + 1})` }]);
    }
    seen.set(row.id, i);
  });
  return parsed.scenarios.map((row) => ({
    id: row.id,
    label: row.label,
    input: "claim" in row.context ? { claim: row.context.claim } : { claim_text: row.context.claim_text },
    expected: typeof row.expected === "string" ? { verdict: row.expected } : row.expected,
  }));
}
