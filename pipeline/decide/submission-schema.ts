// The body of `POST /claims` (docs/http-api.md), the one schema intake parses with and the OpenAPI describes.
import * as z from "zod";
import { ClaimSubmissionSchema, ClaimTextSchema, oneLineText } from "../../core/claim/claim.ts";
import { simulationIdProblem } from "../../core/history/simulation.ts";

/** The body of `POST /claims`: exactly one of `claim` or `claim_text`, plus optional batch metadata. */
export const SubmissionSchema = z
  .object({
    claim: ClaimSubmissionSchema.optional(),
    claim_text: ClaimTextSchema.optional(),
    simulation_id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.:-]+$/, "simulation_id may hold letters, digits and _ . : -")
      // `.` and `..` too, as `claims report` and the run store refuse them (core/history/simulation.ts).
      .refine((id) => !/^\.{1,2}$/.test(id), {
        error: (issue) => simulationIdProblem(String(issue.input)) ?? "simulation_id is invalid",
      })
      .optional(),
    label: oneLineText().max(200).optional(),
  })
  .strict()
  .refine((b) => (b.claim === undefined) !== (b.claim_text === undefined), {
    message: "give exactly one of claim (structured) or claim_text (free text)",
    path: [],
  });
