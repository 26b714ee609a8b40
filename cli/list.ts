// `claims list`: the claims `GET /claims` lists (docs/http-api.md), newest first, from the terminal — against
// `claims serve` (its URL is found in the data directory) or a deployed API, with the intake token.
// Refusals (400/401/403) print the API's error and exit 1; an API that cannot be reached, or a bad
// argument, exits 2.
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { join } from "node:path";
import { ClaimStatusSchema, VerdictValueSchema } from "../core/kernel/claim-record.ts";
import { clientToken } from "./tokens.ts";
import { ListCliError } from "./errors.ts";
import { parseIsoMs } from "../core/integrity/time.ts";
import { stateHolder } from "../local/state-lock.ts";
import { dataDirFrom } from "./data-dir.ts";
import { formatMoney, parseMoney } from "../core/kernel/money.ts";
import type { Amount } from "../core/kernel/public-amount.ts";

type View = {
  claim_id: string;
  status: string;
  verdict?: string;
  reason_code?: string;
  proposal?: { order_id?: string; amount_eur?: number };
  extracted?: { order_id?: string | null; amount_eur?: number | null };
  executed?: boolean;
  simulation_id?: string;
  review?: { status?: string; decision?: string; amount_eur?: number; amount?: Amount };
  /** The verdict's amount in its currency (docs/http-api.md); absent before the verdict or before it existed. */
  amount?: Amount | null;
  refund?: { status?: string; review?: { status?: string } };
  /** What the ACCEPT gave when not a refund (docs/returns.md#outcomes). */
  outcome?: string;
};

/**
 * Where the claim's money is: SETTLED (paid), PENDING (with the provider), FAILED (refused: its review open or
 * RETRIED), CLOSED (a failed refund's review closed), AUTHORISED (executed, not yet with the provider), or nothing;
 * `(credit)` after it for store credit.
 */
export function refundState(v: View): string {
  const state = v.refund?.status
    ? v.refund.review?.status === "CLOSED"
      ? "CLOSED"
      : v.refund.status
    : v.executed === true
      ? "AUTHORISED"
      : "";
  // Store credit settles like a refund; the column says which it is (docs/returns.md#outcomes).
  return state && v.outcome === "STORE_CREDIT" ? `${state} (credit)` : state;
}

/** An amount of `currency` with exactly its decimals ("12.34", "500" JPY, "12.345" KWD); as given when not exact in it. */
function figure(n: number, currency: string): string {
  const parsed = parseMoney(n, currency);
  return parsed.ok ? formatMoney(parsed.money) : String(n);
}

/**
 * The amount that counts for a claim, in its currency (the view's `amount`; EUR when it has none): what a reviewer
 * approved when they did (an approval may be for less than proposed: "900.00 EUR (approved; 1200.00 proposed)"),
 * else the proposal's, else the extracted one. The proposal's `amount_eur` counts the order's currency.
 */
export function claimAmount(v: View): string {
  const currency = v.amount?.currency ?? v.review?.amount?.currency ?? "EUR";
  const proposed = v.proposal?.amount_eur ?? v.extracted?.amount_eur ?? undefined;
  const approved =
    v.review?.decision === "APPROVE"
      ? v.review.amount
        ? Number(v.review.amount.value)
        : v.review.amount_eur
      : undefined;
  if (typeof approved === "number")
    return typeof proposed === "number" && proposed !== approved
      ? `${figure(approved, currency)} ${currency} (approved; ${figure(proposed, currency)} proposed)`
      : `${figure(approved, currency)} ${currency} (approved)`;
  return typeof proposed === "number" ? `${figure(proposed, currency)} ${currency}` : "";
}

const COLUMNS = [
  ["CLAIM", 24],
  ["STATUS", 12],
  ["VERDICT", 8],
  ["REASON", 26],
  ["ORDER", 8],
  ["AMOUNT", 16],
  ["REFUND", 10],
  ["REVIEW", 0],
] as const;

/** One row of cells padded to the columns' widths (the last one as is), trailing blanks cut. */
function row(cells: readonly string[]): string {
  return cells
    .map((c, i) => (i < COLUMNS.length - 1 ? c.padEnd(COLUMNS[i]?.[1] ?? 0) : c))
    .join(" ")
    .replace(/\s+$/, "");
}

/** The header row of `claims list`. */
export const LIST_HEADER = row(COLUMNS.map(([name]) => name));

/** One line per claim: id, status, verdict and reason, order, the amount that counts, the review and its run. */
export function formatClaimLine(v: View): string {
  const order = v.proposal?.order_id ?? v.extracted?.order_id ?? "";
  const review = v.review?.status ? `${v.review.status}${v.review.decision ? ` (${v.review.decision})` : ""}` : "";
  return row([
    v.claim_id,
    v.status,
    v.verdict ?? "",
    v.reason_code ?? "",
    order,
    claimAmount(v),
    refundState(v),
    [review, v.simulation_id ? `(${v.simulation_id})` : ""].filter(Boolean).join(" "),
  ]);
}

/** The API to ask: --url, CLAIMS_URL, the `claims serve` holding the data directory, else the local default. */
function listUrl(
  o: { url?: string; dataDir?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  // An empty CLAIMS_URL is unset.
  const given = o.url ?? (env.CLAIMS_URL?.trim() || undefined);
  const served = given ? undefined : stateHolder(join(dataDirFrom(o.dataDir, env as NodeJS.ProcessEnv), "store"))?.url;
  const url = (given ?? served ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
  if (!/^https?:\/\/\S+$/.test(url)) throw new ListCliError(`--url must be an http(s) URL, got ${url}`);
  return url;
}

function parseStatuses(value: string): string {
  const parts = value.split(",").map((s) => s.trim().toUpperCase());
  for (const p of parts)
    if (!ClaimStatusSchema.safeParse(p).success)
      throw new InvalidArgumentError(`one or more of ${ClaimStatusSchema.options.join(", ")}, comma-separated`);
  return parts.join(",");
}

function parseVerdict(value: string): string {
  const v = value.toUpperCase();
  if (!VerdictValueSchema.safeParse(v).success)
    throw new InvalidArgumentError(`one of ${VerdictValueSchema.options.join(", ")}`);
  return v;
}

function parseSince(value: string): string {
  const ms = parseIsoMs(value);
  if (ms === undefined)
    throw new InvalidArgumentError(
      "an ISO date or timestamp, e.g. 2026-06-01 or 2026-06-01T12:00:00Z (UTC unless it has an offset)",
    );
  return new Date(ms).toISOString();
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000) throw new InvalidArgumentError("a number of claims from 1 to 10000");
  return n;
}

type ListOptions = {
  status?: string;
  verdict?: string;
  since?: string;
  limit: number;
  url?: string;
  tokenFile?: string;
  json?: boolean;
  dataDir?: string;
};

/** Registers `claims list` on the program. */
export function registerListCommand(program: Command): void {
  program
    .command("list")
    .description(
      "list claims newest first through the API (GET /claims), with the intake token (CLAIMS_API_TOKEN or --token-file)",
    )
    .option(
      "--status <status>",
      "RECEIVED, RUNNING, DECIDED, NEEDS_REVIEW or AWAITING_RETURN (several comma-separated)",
      parseStatuses,
    )
    .option("--verdict <verdict>", "ACCEPT, ESCALATE or REJECT", parseVerdict)
    .option("--since <iso>", "received at or after this instant", parseSince)
    .option("--limit <n>", "how many claims at most", parseLimit, 50)
    .option(
      "--url <url>",
      "the API (default $CLAIMS_URL, the claims serve of the data directory, or http://127.0.0.1:3000)",
    )
    .option("--token-file <file>", "a file whose first line is the intake token (default: $CLAIMS_API_TOKEN)")
    .option(
      "--data-dir <path>",
      "where claims serve keeps its state, to find its URL (default $CLAIMS_DATA_DIR or .claims)",
    )
    .option("--json", "print { items } as JSON")
    .action(async (o: ListOptions) => {
      const url = listUrl(o);
      const token = clientToken(o.tokenFile, "CLAIMS_API_TOKEN");
      if (!token)
        throw new ListCliError(
          "no intake token: set CLAIMS_API_TOKEN or pass --token-file FILE (claims serve prints the one it generated)",
        );
      const items: View[] = [];
      let cursor: string | undefined;
      do {
        const query = new URLSearchParams({
          limit: String(Math.min(200, o.limit - items.length)),
          ...(o.status ? { status: o.status } : {}),
          ...(o.verdict ? { verdict: o.verdict } : {}),
          ...(o.since ? { since: o.since } : {}),
          ...(cursor ? { cursor } : {}),
        });
        let response: Response;
        try {
          response = await fetch(`${url}/claims?${query}`, { headers: { authorization: `Bearer ${token}` } });
        } catch (cause) {
          throw new ListCliError(
            `cannot reach ${url}: ${((cause as Error).cause as Error | undefined)?.message ?? (cause as Error).message} (is claims serve running? --url / CLAIMS_URL)`,
          );
        }
        const text = await response.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        if (response.status !== 200) {
          const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
          if (o.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
          process.stderr.write(
            `claims list: ${response.status} ${error?.code ?? ""}: ${error?.message ?? String(body)}\n`,
          );
          process.exitCode = 1;
          return;
        }
        const page = body as { items: View[]; next_cursor?: string };
        items.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor && items.length < o.limit);
      if (o.json) process.stdout.write(`${JSON.stringify({ items }, null, 2)}\n`);
      else
        process.stdout.write(
          items.length === 0 ? "no claims\n" : `${[LIST_HEADER, ...items.map(formatClaimLine)].join("\n")}\n`,
        );
    });
}
