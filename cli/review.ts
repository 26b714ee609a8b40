// `claims review …`: the review API (docs/http-api.md) from the terminal, against `claims serve` or a deployed API.
// The reviewer token comes from --token-file, the file CLAIMS_REVIEWER_TOKEN_FILE names, or CLAIMS_REVIEWER_TOKEN (a named reviewer's own token: the API
// records the decision under that reviewer); the API from --url, CLAIMS_URL, the `claims serve` holding the data
// directory (as `claims list` finds it), else the local default. Refusals (400/404/409) print the API's error and
// exit 1; an API that cannot be reached, or a bad argument, exits 2.
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stateHolder } from "../local/state-lock.ts";
import { dataDirFrom } from "./data-dir.ts";
import { REVIEWER_TOKEN_FILE_VARIABLE, reviewerClientToken } from "./tokens.ts";
import { ReviewCliError } from "./errors.ts";

/** Where and as whom the review commands talk to the API. */
interface ReviewTarget {
  url: string;
  token: string;
  /** Where the token came from (--token-file, CLAIMS_REVIEWER_TOKEN_FILE, CLAIMS_REVIEWER_TOKEN), for a refusal's hint. */
  from: string;
}

/** The outcome of one API call: the status and the parsed JSON body. */
interface ApiAnswer {
  status: number;
  body: unknown;
  /** ReviewTarget.from of the call. */
  tokenFrom?: string;
}

/** The target from the options and the environment; refuses to run without a token. */
function reviewTarget(
  o: { url?: string; tokenFile?: string; dataDir?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ReviewTarget {
  const given = o.url ?? (env.CLAIMS_URL?.trim() || undefined);
  const served = given ? undefined : stateHolder(join(dataDirFrom(o.dataDir, env as NodeJS.ProcessEnv), "store"))?.url;
  const url = (given ?? served ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
  if (!/^https?:\/\/\S+$/.test(url)) throw new ReviewCliError(`--url must be an http(s) URL, got ${url}`);
  const found = reviewerClientToken(o.tokenFile, env);
  if (!found)
    throw new ReviewCliError(
      `no reviewer token: with a reviewers file, your own token (claims reviewers add prints it) in a file named by ${REVIEWER_TOKEN_FILE_VARIABLE} or --token-file FILE; without one, the CLAIMS_REVIEWER_TOKEN claims serve uses (it prints the one it generated)`,
    );
  return { url, ...found };
}

/** One call to the API with the reviewer token. */
async function callApi(target: ReviewTarget, method: "GET" | "POST", path: string, body?: unknown): Promise<ApiAnswer> {
  let response: Response;
  try {
    response = await fetch(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (cause) {
    throw new ReviewCliError(
      `cannot reach ${target.url}: ${((cause as Error).cause as Error | undefined)?.message ?? (cause as Error).message} (is claims serve running? --url / CLAIMS_URL)`,
    );
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // a non-JSON answer is shown as text
  }
  return { status: response.status, body: parsed, tokenFrom: target.from };
}

type Review = {
  review_id: string;
  claim_id: string;
  origin: string;
  status: string;
  reason_code: string;
  reason: string;
  order_id?: string;
  amount_eur?: number;
  requested_at: string;
  decision?: string;
  reviewer?: string;
  note?: string;
  approved_amount_eur?: number;
  approvals?: { reviewer: string; amount?: { value: string; currency: string }; amount_eur?: number; at: string }[];
  awaiting?: string;
};

/** A summary of a listed review: the request, then who decided what (or what it awaits). */
function formatReviewLine(r: Review): string {
  const money = r.amount_eur === undefined ? "" : ` ${r.amount_eur.toFixed(2)} EUR`;
  const lines = [
    `${r.claim_id}  ${r.status.padEnd(11)} ${r.origin.padEnd(12)} ${r.reason_code}${r.order_id ? ` on ${r.order_id}` : ""}${money}  (requested ${r.requested_at})`,
    `    ${r.reason}`,
  ];
  // Each approval in its currency (the listing's `amount`), else as an EUR amount (recorded before currencies).
  const approvals = (r.approvals ?? [])
    .map(
      (a) =>
        `${a.reviewer} (${a.amount ? `${a.amount.value} ${a.amount.currency}` : a.amount_eur === undefined ? "?" : `${a.amount_eur.toFixed(2)} EUR`})`,
    )
    .join(", ");
  if (r.awaiting === "SECOND_APPROVAL")
    lines.push(`    first approval by ${approvals}: awaiting a different reviewer's`);
  if (r.decision)
    lines.push(
      `    ${r.decision} by ${r.reviewer ?? "?"}${r.approved_amount_eur === undefined ? "" : ` for ${r.approved_amount_eur.toFixed(2)} EUR`}${(r.approvals?.length ?? 0) > 1 ? ` (approvals: ${approvals})` : ""}${r.note ? `: ${r.note}` : ""}`,
    );
  return lines.join("\n");
}

/** Every review of a status, page by page. */
async function* allReviews(target: ReviewTarget, status: string): AsyncGenerator<Review> {
  let cursor: string | undefined;
  do {
    const answer = await callApi(
      target,
      "GET",
      `/reviews?status=${status}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (answer.status !== 200) throw Object.assign(new Error("refused"), { answer });
    const page = answer.body as { items: Review[]; next_cursor?: string };
    yield* page.items;
    cursor = page.next_cursor;
  } while (cursor);
}

const STATUSES = ["PENDING", "APPROVED", "DENIED", "RESUBMITTED"] as const;

function parseStatus(value: string): string {
  const s = value.toUpperCase();
  if (!(STATUSES as readonly string[]).includes(s)) throw new InvalidArgumentError(`one of ${STATUSES.join(", ")}`);
  return s;
}

function parseAmount(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("an amount in EUR, e.g. 120.50");
  return n;
}

/** A claim from --claim: JSON text, or @file holding JSON. */
function readClaim(value: string): unknown {
  const text = value.startsWith("@") ? readFileSync(value.slice(1), "utf8") : value;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(`the corrected claim must be JSON (or @file with JSON): ${(e as Error).message}`);
  }
}

type Common = { url?: string; tokenFile?: string; dataDir?: string; json?: boolean };

/** What to do when the API refuses the reviewer token: which token was sent, and which one each kind of server takes. */
export function refusedTokenHint(from: string): string {
  return (
    `  the token sent came from ${from}. A claims serve with a reviewers file takes only a reviewer's own token ` +
    `(claims reviewers add prints it once): keep it in a file and set ${REVIEWER_TOKEN_FILE_VARIABLE}, or pass --token-file. ` +
    "Without a reviewers file it takes the CLAIMS_REVIEWER_TOKEN it was started with; a deployed API takes a reviewer's ID token (claims reviewer-login).\n"
  );
}

/** Prints an answer: JSON with --json, else a line; returns the exit code (0 success, 1 refused). */
function report(answer: ApiAnswer, json: boolean | undefined, ok: (body: unknown) => string): number {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  if (json) out(JSON.stringify(answer.body, null, 2));
  if (answer.status >= 200 && answer.status < 300) {
    if (!json) out(ok(answer.body));
    return 0;
  }
  const error = (
    answer.body as
      | { error?: { code?: string; message?: string; issues?: { path: string; message: string }[] } }
      | undefined
  )?.error;
  if (!json) {
    process.stderr.write(
      `claims review: ${answer.status} ${error?.code ?? ""}: ${error?.message ?? String(answer.body)}\n`,
    );
    for (const i of error?.issues ?? []) process.stderr.write(`  ${i.path}: ${i.message}\n`);
    if ((answer.status === 401 || answer.status === 403) && answer.tokenFrom)
      process.stderr.write(refusedTokenHint(answer.tokenFrom));
  }
  return 1;
}

function decided(body: unknown): string {
  const b = body as {
    claim_id: string;
    review: { status: string; amount_eur?: number };
    executed: boolean;
    execution_id?: string;
    resubmitted_claim_id?: string;
  };
  return `${b.claim_id}: review ${b.review.status}${b.executed ? `, refund executed (${b.execution_id ?? "?"})` : ""}${b.resubmitted_claim_id ? `, resubmitted as ${b.resubmitted_claim_id}` : ""}`;
}

/** Posts a decision on a claim's review and prints the answer; returns the exit code. */
async function postDecision(claimId: string, body: Record<string, unknown>, o: Common): Promise<number> {
  const path = `/claims/${encodeURIComponent(claimId)}/review`;
  return report(await callApi(reviewTarget(o), "POST", path, body), o.json, decided);
}

/** Registers `claims review list|show|approve|deny|resubmit|retry|close` on the program. */
export function registerReviewCommands(program: Command): void {
  const review = program
    .command("review")
    .description(
      "list and decide human reviews through the API, as the reviewer whose token you use (CLAIMS_REVIEWER_TOKEN or --token-file)",
    );
  const common = (c: Command) =>
    c
      .option(
        "--url <url>",
        "the API (default $CLAIMS_URL, else the claims serve holding the data directory, else http://127.0.0.1:3000)",
      )
      .option(
        "--data-dir <path>",
        "the data directory of the claims serve to find (default $CLAIMS_DATA_DIR or .claims)",
      )
      .option(
        "--token-file <file>",
        "a file whose first line is your reviewer token (default: the file $CLAIMS_REVIEWER_TOKEN_FILE names, else $CLAIMS_REVIEWER_TOKEN)",
      )
      .option("--json", "print the API's JSON answer on stdout");

  common(review.command("list").description("list reviews, oldest request first"))
    .option("--status <status>", "PENDING, APPROVED, DENIED or RESUBMITTED", parseStatus, "PENDING")
    .action(async (o: Common & { status: string }) => {
      const target = reviewTarget(o);
      const items: Review[] = [];
      try {
        for await (const r of allReviews(target, o.status)) items.push(r);
      } catch (e) {
        // A refusal of the API exits 1; an API that cannot be reached (ReviewCliError) exits 2.
        const answer = (e as { answer?: ApiAnswer }).answer;
        if (!answer) throw e;
        process.exitCode = report(answer, o.json, () => "");
        return;
      }
      if (o.json) process.stdout.write(`${JSON.stringify({ items }, null, 2)}\n`);
      else
        process.stdout.write(
          `${items.length === 0 ? `no ${o.status} reviews` : items.map(formatReviewLine).join("\n")}\n`,
        );
    });

  common(review.command("show <claimId>").description("show the review of one claim")).action(
    async (claimId: string, o: Common) => {
      const target = reviewTarget(o);
      for (const status of STATUSES) {
        for await (const r of allReviews(target, status)) {
          if (r.claim_id !== claimId) continue;
          process.stdout.write(`${o.json ? JSON.stringify(r, null, 2) : formatReviewLine(r)}\n`);
          return;
        }
      }
      process.stderr.write(`claims review: claim ${claimId} has no review\n`);
      process.exitCode = 1;
    },
  );

  common(
    review
      .command("approve <claimId>")
      .description("approve an escalated claim: the reject checks run again, then the refund is reserved once"),
  )
    .option("--amount <eur>", "approve less than proposed (default: the proposed amount)", parseAmount)
    .option("--note <text>", "why (required when approving less than proposed)")
    .action(async (claimId: string, o: Common & { amount?: number; note?: string }) => {
      const body = {
        decision: "APPROVE",
        ...(o.amount === undefined ? {} : { amount_eur: o.amount }),
        ...(o.note ? { note: o.note } : {}),
      };
      process.exitCode = await postDecision(claimId, body, o);
    });

  common(review.command("deny <claimId>").description("deny a claim under review: it closes without a refund"))
    .requiredOption("--note <text>", "why (recorded and published)")
    .action(async (claimId: string, o: Common & { note: string }) => {
      const body = { decision: "DENY", note: o.note };
      process.exitCode = await postDecision(claimId, body, o);
    });

  common(
    review
      .command("resubmit <claimId>")
      .description("resubmit a claim that needs review with a corrected structured claim"),
  )
    .requiredOption("--claim <json>", "the corrected claim as JSON, or @file", readClaim)
    .option("--note <text>", "a note for the record")
    .action(async (claimId: string, o: Common & { claim: unknown; note?: string }) => {
      const body = {
        decision: "RESUBMIT",
        claim: o.claim,
        ...(o.note ? { note: o.note } : {}),
      };
      process.exitCode = await postDecision(claimId, body, o);
    });

  common(
    review
      .command("retry <claimId>")
      .description("retry a refund the payment provider refused: a new execution id, so the provider is called again"),
  )
    .option("--note <text>", "a note for the record")
    .action(async (claimId: string, o: Common & { note?: string }) => {
      const body = { decision: "RETRY", ...(o.note ? { note: o.note } : {}) };
      process.exitCode = await postDecision(claimId, body, o);
    });

  common(
    review
      .command("close <claimId>")
      .description(
        "close a refund the payment provider refused: unpaid (its reservation is released), or --paid-out-of-band (kept: refunded); either way the order goes to a person next",
      ),
  )
    .requiredOption("--note <text>", "why (recorded and published)")
    .option("--paid-out-of-band", "the refund was paid another way (e.g. a bank transfer): it counts as refunded")
    .action(async (claimId: string, o: Common & { note: string; paidOutOfBand?: boolean }) => {
      const body = { decision: "CLOSE", paid_out_of_band: o.paidOutOfBand === true, note: o.note };
      process.exitCode = await postDecision(claimId, body, o);
    });
}
