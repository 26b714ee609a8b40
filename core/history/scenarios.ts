import * as z from "zod";
import { canonicalize, hashHex } from "../crew/index.ts";
import { ClaimSchema, ClaimTextSchema } from "../claim/claim.ts";
import { ignoredField, ignoredFields, parseYamlSource, validateYaml } from "../claim/yaml-source.ts";
import { SourceFileError } from "../claim/errors.ts";
import type { IgnoredField } from "../claim/yaml-source.ts";
import type { Claim } from "../claim/claim.ts";
import type { ExpectedOutcome } from "./expected-outcome.ts";
import { ExpectedSchema } from "./scenario-expected.ts";
import { IdSchema, ReviewStepSchema, normaliseStep } from "./scenario-steps.ts";
import type { ReviewStep } from "./scenario-steps.ts";

export { NEEDS_REVIEW_REASON_CODES } from "./scenario-expected.ts";
export type { ReviewStep } from "./scenario-steps.ts";

const ContextSchema = z
  .object({ claim: ClaimSchema.optional(), claim_text: ClaimTextSchema.optional() })
  .strict()
  .superRefine((c, ctx) => {
    if (c.claim !== undefined && c.claim_text !== undefined)
      ctx.addIssue({ code: "custom", message: "context has both claim and claim_text: give one of them" });
    if (c.claim === undefined && c.claim_text === undefined)
      ctx.addIssue({ code: "custom", message: "context needs one of claim (structured) or claim_text (free text)" });
  });

/** The id DIR sample 35 writes into its labels: `SCENARIO A - Valid…` → `A`. */
export function idFromLabel(label: unknown): string | undefined {
  if (typeof label !== "string") return undefined;
  const m = /^\s*SCENARIO\s+([A-Za-z0-9_-]{1,64})\s*(?:[-–—:]|$)/i.exec(label);
  return m?.[1];
}

const ScenarioRowSchema = z
  .object({
    id: IdSchema.optional(),
    label: z.string().min(1),
    context: ContextSchema,
    expected: ExpectedSchema,
    /** Rows with the same `race` (next to each other) are submitted at once and matched as a group, by count. */
    race: IdSchema.optional(),
    notes: ignoredField("notes for the people reading the file", z.string()),
  })
  .strict()
  .superRefine((row, ctx) => {
    if (row.id === undefined && idFromLabel(row.label) === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["id"],
        message: "id is missing, and the label does not name one (as in 'SCENARIO A - …'): add an id",
      });
    }
  });

/**
 * Schema of `scenarios/scenarios.yaml` (docs/config.md), including DIR sample 35's rows (no `id`, `notes`), and the
 * review steps a person takes once every scenario has run (`reviews`, optional).
 */
const ScenarioFileSchema = z
  .object({
    scenarios: z.array(ScenarioRowSchema).min(1, "no scenarios"),
    reviews: z.array(ReviewStepSchema).optional(),
    /** Scenarios that run once the review steps have (a claim on an order a person decided, say). */
    after_reviews: z.array(ScenarioRowSchema).optional(),
  })
  .strict();

/** One scenario, normalised. */
export interface Scenario {
  id: string;
  label: string;
  input: { claim: Claim } | { claim_text: string };
  /** `executed`: whether the claim's refund executed at once (an ACCEPT waiting for its return did not). */
  expected: {
    verdict: ExpectedOutcome;
    reason_code?: string;
    executed?: boolean;
    outcome?: "REFUND" | "STORE_CREDIT" | "EXCHANGE";
  };
  /** The race this row belongs to: its rows are submitted at once and matched as a group, by count. */
  race?: string;
}

/** A scenario file as read: its scenarios, the ids taken from labels, and the keys accepted but ignored. */
export interface ScenarioFile {
  scenarios: Scenario[];
  /** Ids that came from a label (`SCENARIO A - …`) because the row has no `id`. */
  idsFromLabels: string[];
  ignored: IgnoredField[];
  /** The review steps, in file order (they run after every scenario). */
  reviews: ReviewStep[];
  /** Scenarios that run after the review steps (`after_reviews`), in file order. */
  afterReviews: Scenario[];
}

/** Parses and validates scenario YAML text. Throws `SourceFileError` naming file, row and field. */
export function parseScenarioFile(text: string, file: string): ScenarioFile {
  const source = parseYamlSource(text, file);
  const rows = (source.value as { scenarios?: { id?: unknown; label?: unknown }[] } | null)?.scenarios;
  const parsed = validateYaml(source, ScenarioFileSchema, (path) => {
    if (path[0] !== "scenarios" || typeof path[1] !== "number") return undefined;
    const row = Array.isArray(rows) ? rows[path[1]] : undefined;
    const id = typeof row?.id === "string" ? row.id : idFromLabel(row?.label);
    return id ?? `#${path[1] + 1}`;
  });
  const seen = new Map<string, number>();
  const idsFromLabels: string[] = [];
  const rowsOf = (section: "scenarios" | "after_reviews", list: typeof parsed.scenarios): Scenario[] => {
    const where = (i: number, id: string, field: string, message: string) =>
      new SourceFileError(file, [
        { file, line: source.lineOf([section, i, field]), row: id, field: `${section}[${i}].${field}`, message },
      ]);
    const races = new Map<string, number>();
    return list.map((row, i): Scenario => {
      const id = row.id ?? idFromLabel(row.label)!;
      if (row.id === undefined) idsFromLabels.push(id);
      const previous = seen.get(id);
      if (previous !== undefined) {
        const how = row.id === undefined ? " (taken from the label: add an id to tell them apart)" : "";
        throw where(i, id, row.id === undefined ? "label" : "id", `duplicate id (also row #${previous + 1})${how}`);
      }
      seen.set(id, i);
      if (row.race !== undefined) {
        const last = races.get(row.race);
        if (last !== undefined && last !== i - 1)
          throw where(i, id, "race", `race ${JSON.stringify(row.race)}: its rows must be next to each other`);
        races.set(row.race, i);
      }
      return {
        id,
        label: row.label,
        input: row.context.claim !== undefined ? { claim: row.context.claim } : { claim_text: row.context.claim_text! },
        expected: {
          verdict: row.expected.verdict,
          ...(row.expected.reason_code === undefined ? {} : { reason_code: row.expected.reason_code }),
          ...(row.expected.executed === undefined ? {} : { executed: row.expected.executed }),
          ...(row.expected.outcome === undefined ? {} : { outcome: row.expected.outcome }),
        },
        ...(row.race !== undefined ? { race: row.race } : {}),
      };
    });
  };
  const scenarios = rowsOf("scenarios", parsed.scenarios);
  for (const group of new Set(scenarios.flatMap((r) => (r.race ? [r.race] : [])))) {
    const at = scenarios.findIndex((r) => r.race === group);
    if (scenarios.filter((r) => r.race === group).length < 2)
      throw new SourceFileError(file, [
        {
          file,
          line: source.lineOf(["scenarios", at, "race"]),
          row: scenarios[at]!.id,
          field: `scenarios[${at}].race`,
          message: `race ${JSON.stringify(group)} has one row: a race needs two or more`,
        },
      ]);
  }
  const scenarioIds = [...seen.keys()];
  let offsetMs = 0;
  const reviews = (parsed.reviews ?? []).map((step, i): ReviewStep => {
    const where = (field: string, message: string) =>
      new SourceFileError(file, [
        { file, line: source.lineOf(["reviews", i, field]), row: step.id, field: `reviews[${i}].${field}`, message },
      ]);
    if (seen.has(step.id))
      throw where("id", `duplicate id (${scenarioIds.includes(step.id) ? "a scenario" : "another step"} has it)`);
    seen.set(step.id, -1);
    const normalised = normaliseStep(step, scenarioIds, offsetMs, where);
    offsetMs = normalised.offsetMs;
    return normalised;
  });
  const afterReviews = rowsOf("after_reviews", parsed.after_reviews ?? []);
  return {
    scenarios,
    idsFromLabels,
    ignored: ignoredFields(ScenarioFileSchema, source.value),
    reviews,
    afterReviews,
  };
}

/** Parses and validates scenario YAML text. Throws `SourceFileError` naming file, row and field. */
export function parseScenarios(text: string, file: string): Scenario[] {
  return parseScenarioFile(text, file).scenarios;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** Replaces `{{date:-3d}}` in claim text with a prose date relative to the run's clock. */
export function renderClaimText(text: string, nowMs: number): string {
  return text.replace(/\{\{date:([+-]\d+)([dh])\}\}/g, (_m, n: string, unit: string) => {
    const d = new Date(nowMs + Number(n) * (unit === "d" ? 86_400_000 : 3_600_000));
    return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  });
}

/** The submission body of a scenario. */
export function scenarioBody(s: Scenario, simulationId: string, nowMs: number): Record<string, unknown> {
  const input =
    "claim" in s.input ? { claim: s.input.claim } : { claim_text: renderClaimText(s.input.claim_text, nowMs) };
  return { ...input, simulation_id: simulationId, label: `${s.id} — ${s.label}` };
}

/** A run id that sorts by time: `<run_id>_<YYYYMMDDTHHMMSSZ>`. */
export function simulationIdFor(runId: string, nowMs: number): string {
  return `${runId}_${new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}`;
}

/** The claim id and Idempotency-Key of a scenario in a run (the same as `claims batch` uses), so a re-run submission is a replay. */
export function scenarioKeys(
  simulationId: string,
  scenarioId: string,
  body: unknown,
): { claimId: string; idempotencyKey: string } {
  return {
    claimId: `clm_${hashHex(`${simulationId}:${scenarioId}`).slice(0, 20)}`,
    idempotencyKey: `${simulationId}:${scenarioId}:${hashHex(canonicalize(body)).slice(0, 16)}`,
  };
}
