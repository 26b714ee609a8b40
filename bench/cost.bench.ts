// `npm run bench -- cost`: the cost of a claim (bench/cost.ts) from bench/out/aws-requests.json, which
// bench/aws-requests.bench.ts writes earlier in the same `npm run bench` (files run in alphabetical
// order; counted on the local stack here when the file is missing), beside the committed profile
// measured before the cost levers (bench/cost-baseline.json).
import { existsSync } from "node:fs";
import {
  GOAL_PER_MILLION,
  costLines,
  costTable,
  money,
  optionsFor,
  stepFunctionsStates,
  withTimerPath,
} from "./cost.ts";
import { formatTable } from "./lib/harness.ts";
import type { TableRow } from "./lib/harness.ts";
import { AWS_REQUESTS_FILE, BASELINE_FILE, readAwsRequests } from "./lib/profile.ts";
import type { AwsRequestsFile, ClaimKind } from "./lib/profile.ts";

const KINDS: readonly ClaimKind[] = ["structured", "free_text"];
const kindLabel = (k: ClaimKind) => (k === "structured" ? "structured" : "free text");

/** The cost section: the one table (before and now when a baseline exists), then every line of the current bill. */
export function report(now: AwsRequestsFile, before?: AwsRequestsFile): string {
  const same = before !== undefined && before.recordedAt === now.recordedAt && before.commit === now.commit;
  const files = !before
    ? [{ name: "now", file: now }]
    : same
      ? [{ name: "before (= now)", file: now }]
      : [
          { name: "before", file: before },
          { name: "now", file: now },
        ];
  const columns = KINDS.flatMap((kind) => files.map((f) => ({ ...f, kind })));
  const rows = costTable(columns);
  const tableRows: TableRow[] = rows.map((r) => {
    const row: TableRow = { line: r.line };
    r.values.forEach((value, i) => {
      const c = columns[i]!;
      const goal = r.line.startsWith("**All-in per claim**") ? (value <= GOAL_PER_MILLION ? " met" : " MISSED") : "";
      row[`${kindLabel(c.kind)}, ${c.name} $/M`] = `${money(value)}${goal}`;
    });
    row["measured / assumed"] = r.basis;
    row["price (source)"] = r.price;
    return row;
  });
  const lineRows = (kind: ClaimKind): TableRow[] =>
    [...costLines(withTimerPath(now, now.concurrent[kind]), optionsFor(now))]
      .sort((a, b) => b.perClaim - a.perClaim)
      .map((l) => ({
        service: l.service,
        item: l.item,
        category: l.category,
        "units/claim": Number(l.units.toPrecision(4)),
        unit: l.unit,
        "$/M claims": money(l.perClaim * 1e6),
      }));
  const stateRows: TableRow[] = stepFunctionsStates("free_text").map((s) => ({
    state: s.state,
    type: s.type,
    transitions: s.transitions,
    does: s.does,
  }));
  const describe = (name: string, f: AwsRequestsFile) =>
    `**${name}**: recorded ${f.recordedAt} at ${f.commit} on ${f.machine}. ${f.note}`;
  return [
    "## What a claim costs on AWS (bench/cost.ts)",
    "",
    ...files.map((f) => `- ${describe(f.name, f.file)}`),
    `- $ per million claims at AWS list prices (us-east-1, on-demand, first tier, free tiers ignored; LLM tokens excluded). Storage rows are $ per month per million claims kept. Under load = the event-source batch fill measured with claims in flight.`,
    "",
    formatTable(tableRows),
    "",
    "### Every line of the all-in bill now, structured claim",
    "",
    formatTable(lineRows("structured")),
    "",
    "### Every line of the all-in bill now, free-text claim",
    "",
    formatTable(lineRows("free_text")),
    "",
    "### The state machine priced for Step Functions (free text; a structured claim skips the first two states)",
    "",
    formatTable(stateRows),
  ].join("\n");
}

/** Reads the fresh profile (counting on the local stack first when it is missing) and the committed baseline. */
export async function run(): Promise<string> {
  if (!existsSync(AWS_REQUESTS_FILE)) {
    const { countAwsRequests } = await import("./aws-requests.bench.ts");
    await countAwsRequests();
  }
  const now = await readAwsRequests(AWS_REQUESTS_FILE);
  const before = existsSync(BASELINE_FILE) ? await readAwsRequests(BASELINE_FILE) : undefined;
  return report(now, before);
}
