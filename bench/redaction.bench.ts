// Redaction before the model (docs/privacy.md): recall and precision per type and language on the labelled set
// (core/privacy/fixtures/labelled-set.jsonl), the held-out templates apart, and the time to redact one claim text.
import { performance } from "node:perf_hooks";
import { redactPersonalData } from "../core/privacy/redact.ts";
import { buildLabelledSet } from "../core/privacy/testing/labelled-set.ts";
import { measureRedaction, redactionTable } from "../core/privacy/testing/measure.ts";

export async function run(): Promise<string> {
  const set = buildLabelledSet();
  const tuned = set.filter((t) => !t.id.startsWith("held-out-"));
  const heldOut = set.filter((t) => t.id.startsWith("held-out-"));
  const rounds = 5;
  const start = performance.now();
  for (let i = 0; i < rounds; i++) for (const t of set) redactPersonalData(t.text);
  const perText = (performance.now() - start) / (rounds * set.length);
  return [
    "## Redaction before the model",
    "",
    `${set.length} labelled claim texts (${tuned.length} from the templates the redactor was tuned on, ${heldOut.length} from held-out templates). Each cell: recall / precision.`,
    "",
    `### All ${set.length}`,
    "",
    redactionTable(measureRedaction(set)),
    "",
    `### Held-out templates (${heldOut.length})`,
    "",
    redactionTable(measureRedaction(heldOut)),
    "",
    `Redacting one claim text (mean ${Math.round(set.reduce((n, t) => n + t.text.length, 0) / set.length)} characters): ${(perText * 1000).toFixed(0)} µs.`,
  ].join("\n");
}
