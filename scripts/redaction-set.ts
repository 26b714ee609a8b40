// Writes the labelled redaction set (core/privacy/testing/labelled-set.ts) to core/privacy/fixtures/labelled-set.jsonl,
// one labelled text a line; core/privacy/redact.test.ts checks the file is what the builder gives.
// `node --import tsx scripts/redaction-set.ts`
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildLabelledSet, labelledSetLines } from "../core/privacy/testing/labelled-set.ts";

const out = fileURLToPath(new URL("../core/privacy/fixtures/labelled-set.jsonl", import.meta.url));
const set = buildLabelledSet();
writeFileSync(out, labelledSetLines(set));
console.log(`wrote ${set.length} labelled texts to core/privacy/fixtures/labelled-set.jsonl`);
