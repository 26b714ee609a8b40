import * as z from "zod";
import { canonicalize, hashHex } from "../crew/index.ts";
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

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** Replaces `{{date:-3d}}` in claim text with a prose date relative to the run's clock. */
export function renderClaimText(text: string, nowMs: number): string {
  return text.replace(/\{\{date:([+-]\d+)([dh])\}\}/g, (_m, n: string, unit: string) => {
    const d = new Date(nowMs + Number(n) * (unit === "d" ? 86_400_000 : 3_600_000));
    return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  });
}

/** The submission body of a scenario. */
export function scenarioBody(s: Scenario, simulationId: string, nowMs: number): Record<string, unknown> {
  const input = "claim" in s.input ? { claim: s.input.claim } : { claim_text: renderClaimText(s.input.claim_text, nowMs) };
  return { ...input, simulation_id: simulationId, label: `${s.id} — ${s.label}` };
}

/** A run id that sorts by time: `<run_id>_<YYYYMMDDTHHMMSSZ>`. */
export function simulationIdFor(runId: string, nowMs: number): string {
  return `${runId}_${new Date(nowMs).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}`;
}

/** The claim id and Idempotency-Key of a scenario in a run (the same as `claims batch` uses), so a re-run submission is a replay. */
export function scenarioKeys(simulationId: string, scenarioId: string, body: unknown): { claimId: string; idempotencyKey: string } {
  return { claimId: `clm_${hashHex(`${simulationId}:${scenarioId}`).slice(0, 20)}`, idempotencyKey: `${simulationId}:${scenarioId}:${hashHex(canonicalize(body)).slice(0, 16)}` };
}
