// What a scenario expects, on its own so that reading a recorded run (the report, SIMULATION_START) needs no
// YAML parser: scenarios.ts, which parses scenario files, re-exports it.
import * as z from "zod";

/** Outcomes a scenario can expect: a kernel verdict, or that the claim ends in human review. */
export const ExpectedOutcomeSchema = z.enum(["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"]);

/** An expected outcome. */
export type ExpectedOutcome = z.infer<typeof ExpectedOutcomeSchema>;
