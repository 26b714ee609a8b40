// `claims reconcile [--since ISO] [--json] [--data-dir DIR] [--pending-hours N]` (docs/cli.md, docs/payments.md):
// every authorised refund (RefundExecuted without a simulation_id) with its settlement (RefundSettled /
// RefundFailed), read from the local bus journal `events.jsonl` of the data directory, and the unsettled ones near
// their legal deadline (docs/returns.md#the-refund-due-alarm). Exit 0 when every refund is settled, 1 when one
// failed or has been pending longer than the bound, 2 on a usage error.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { refundsDueSoon } from "../core/kernel/refund-due.ts";
import type { AcceptedRefund, RefundDueLine } from "../core/kernel/refund-due.ts";
import { reconcile } from "../core/kernel/settlement.ts";
import type { Reconciliation, SettlementFact } from "../core/kernel/settlement.ts";
import { parseIsoMs } from "../core/integrity/time.ts";
import { CliError } from "./errors.ts";
import { dataDirFrom } from "./data-dir.ts";

/** Hours a refund may stay PENDING before reconcile fails (Stripe settles most card refunds within days, its webhooks within minutes). */
export const DEFAULT_PENDING_HOURS = 72;

type JournalLine = { "detail-type"?: unknown; time?: unknown; detail?: Record<string, unknown> };

/** The settlement facts of journal lines: real refunds only (a simulation's are never paid). */
export function settlementFacts(lines: readonly JournalLine[]): SettlementFact[] {
  const facts: SettlementFact[] = [];
  for (const line of lines) {
    const d = line.detail ?? {};
    if (d.simulation_id !== undefined || typeof d.execution_id !== "string") continue;
    const at = typeof line.time === "string" ? line.time : "";
    const type = line["detail-type"];
    // The amount in its currency (`amount`), or `amount_eur` on an event from before currencies (kept for EUR).
    const amount = d.amount as { value?: unknown; currency?: unknown } | undefined;
    const inCurrency =
      typeof amount?.value === "string" && typeof amount.currency === "string"
        ? { amount_eur: Number(amount.value), currency: amount.currency }
        : typeof d.amount_eur === "number"
          ? { amount_eur: d.amount_eur, currency: "EUR" }
          : undefined;
    if (type === "RefundExecuted" && typeof d.claim_id === "string" && inCurrency)
      facts.push({
        kind: "executed",
        execution_id: d.execution_id,
        claim_id: d.claim_id,
        amount_eur: inCurrency.amount_eur,
        ...(inCurrency.currency === "EUR" ? {} : { currency: inCurrency.currency }),
        at,
        ...(typeof d.retry_of === "string" ? { retry_of: d.retry_of } : {}),
      });
    else if (type === "ReviewDecided" && d.decision === "CLOSE")
      // A reviewer closed the failed refund: paid out of band it counts as settled, otherwise as not refunded.
      facts.push({
        kind: "closed",
        execution_id: d.execution_id,
        at,
        ...(d.paid_out_of_band === true ? { paid_out_of_band: true } : {}),
      });
    else if (type === "RefundSettled" || type === "RefundFailed")
      facts.push({
        kind: type === "RefundSettled" ? "settled" : "failed",
        execution_id: d.execution_id,
        at,
        ...(typeof d.provider_ref === "string" ? { provider_ref: d.provider_ref } : {}),
        ...(typeof d.failure_reason === "string" ? { failure_reason: d.failure_reason } : {}),
      });
  }
  return facts;
}

/**
 * The executions that issue store credit, not cash: a `RefundExecuted` carrying `credit` (docs/returns.md#outcomes),
 * and a RETRY of one (its new execution issues the same credit).
 */
export function creditExecutions(lines: readonly JournalLine[]): Set<string> {
  const credit = new Set<string>();
  for (const line of lines) {
    const d = line.detail ?? {};
    if (line["detail-type"] !== "RefundExecuted" || typeof d.execution_id !== "string") continue;
    if (d.credit !== undefined || (typeof d.retry_of === "string" && credit.has(d.retry_of)))
      credit.add(d.execution_id);
  }
  return credit;
}

/**
 * Cash apart from store credit: the totals of the cash refunds, and of the credits by themselves (absent when no
 * execution issued credit). A credit's amount is its base (what the ledger reserved; the bonus is on top), and the
 * two are never added: credit is no money paid back.
 */
export function cashAndCredit(facts: readonly SettlementFact[], credit: ReadonlySet<string>, since?: string) {
  const cash = reconcile(
    facts.filter((f) => !credit.has(f.execution_id)),
    since,
  );
  if (credit.size === 0) return { totals: cash.totals };
  const credits = reconcile(
    facts.filter((f) => credit.has(f.execution_id)),
    since,
  );
  return { totals: cash.totals, credit: { count: credits.refunds.length, totals: credits.totals } };
}

/** The totals of one kind (cash or store credit) as the totals line says them: EUR, then one clause per currency. */
export function totalsText(t: Reconciliation["totals"]): string {
  return `settled ${t.settled_eur.toFixed(2)} EUR, pending ${t.pending_eur.toFixed(2)} EUR, failed ${t.failed_eur.toFixed(2)} EUR${Object.entries(
    t.currencies ?? {},
  )
    .map(([c, x]) => `; in ${c}: settled ${x.settled}, pending ${x.pending}, failed ${x.failed}`)
    .join("")}`;
}

/**
 * What the totals do not show apart: the part of `settled` a reviewer CLOSEd as paid out of band, and the failed
 * refunds a reviewer CLOSEd unpaid (left out of the refunds: not refunded), authorised at or after `since`.
 */
export function shownApart(facts: readonly SettlementFact[], result: Reconciliation, since?: string) {
  const cents = (eur: number) => Math.round(eur * 100);
  const outOfBand = result.refunds.filter((r) => r.status === "PAID_OUT_OF_BAND");
  const unpaidIds = new Set(
    facts.flatMap((f) => (f.kind === "closed" && f.paid_out_of_band !== true ? [f.execution_id] : [])),
  );
  const unpaid = facts.flatMap((f) =>
    f.kind === "executed" && unpaidIds.has(f.execution_id) && (since === undefined || f.at >= since)
      ? [
          {
            claim_id: f.claim_id,
            execution_id: f.execution_id,
            amount_eur: f.amount_eur,
            ...(f.currency === undefined ? {} : { currency: f.currency }),
          },
        ]
      : [],
  );
  // `eur` sums the EUR refunds only: no two currencies are ever added (each refund names its own).
  const eurOnly = (r: { currency?: string }) => r.currency === undefined || r.currency === "EUR";
  return {
    paid_out_of_band: {
      count: outOfBand.length,
      eur: outOfBand.filter(eurOnly).reduce((n, r) => n + cents(r.amount_eur), 0) / 100,
    },
    closed_unpaid: {
      count: unpaid.length,
      eur: unpaid.filter(eurOnly).reduce((n, r) => n + cents(r.amount_eur), 0) / 100,
      refunds: unpaid,
    },
  };
}

/**
 * The unsettled refunds (PENDING or FAILED) at or past `refund_due_days − 4` days at `now`, soonest due first. A
 * refund's clock starts at its claim's first `RefundExecuted` (the decision, or for a return the pay_on event that
 * released it); its days are its `ReturnRequested`'s `refund_due_days`, else 14.
 */
export function refundsDueInJournal(
  lines: readonly JournalLine[],
  result: Reconciliation,
  now: number,
): RefundDueLine[] {
  const firstExecuted = new Map<string, string>();
  const dueDays = new Map<string, number>();
  for (const line of lines) {
    const d = line.detail ?? {};
    if (d.simulation_id !== undefined || typeof d.claim_id !== "string" || typeof line.time !== "string") continue;
    const known = firstExecuted.get(d.claim_id);
    if (line["detail-type"] === "RefundExecuted" && (known === undefined || line.time < known))
      firstExecuted.set(d.claim_id, line.time);
    if (line["detail-type"] === "ReturnRequested" && typeof d.refund_due_days === "number")
      dueDays.set(d.claim_id, d.refund_due_days);
  }
  const refunds: AcceptedRefund[] = result.refunds.flatMap((r) => {
    const start = firstExecuted.get(r.claim_id);
    if (start === undefined) return [];
    const days = dueDays.get(r.claim_id);
    return [
      {
        claim_id: r.claim_id,
        decidedAt: start,
        returnAsked: false,
        ...(days !== undefined ? { refundDueDays: days } : {}),
        settled: r.status !== "PENDING" && r.status !== "FAILED",
      },
    ];
  });
  return refundsDueSoon(refunds, now);
}

/** One line of `claims reconcile` for a refund near its legal deadline. */
export function refundDueText(line: RefundDueLine): string {
  const left =
    line.days_left >= 0
      ? `${line.days_left} day${line.days_left === 1 ? "" : "s"} left`
      : `overdue by ${-line.days_left} day${line.days_left === -1 ? "" : "s"}`;
  return `DUE SOON ${line.claim_id} refund due ${line.due_at} (${left})`;
}

/** The refunds that make reconcile fail: FAILED, or PENDING since before `pendingSince`. */
export function unreconciled(result: Reconciliation, pendingSince: string) {
  return result.refunds.filter(
    (r) => r.status === "FAILED" || (r.status === "PENDING" && r.authorised_at < pendingSince),
  );
}

const parseSince = (value: string) => {
  if (parseIsoMs(value) === undefined) throw new InvalidArgumentError("--since takes an ISO 8601 instant");
  return new Date(parseIsoMs(value)!).toISOString();
};
const parseHours = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("--pending-hours takes a positive number of hours");
  return n;
};

/** Registers `claims reconcile`. */
export function registerReconcileCommand(program: Command): void {
  program
    .command("reconcile")
    .description(
      "every authorised refund with its settlement (settled, pending, failed); exit 1 when one failed or is pending too long",
    )
    .option("--since <iso>", "refunds authorised at or after this instant", parseSince)
    .option("--pending-hours <n>", `how long a refund may stay pending (default ${DEFAULT_PENDING_HOURS})`, parseHours)
    .option("--json", "print { refunds, totals } as JSON")
    .option("--data-dir <path>", "where the local bus journal events.jsonl is (default $CLAIMS_DATA_DIR or .claims)")
    .action((o: { since?: string; pendingHours?: number; json?: boolean; dataDir?: string }) => {
      const path = join(dataDirFrom(o.dataDir), "events.jsonl");
      if (!existsSync(path))
        throw new CliError(
          `no bus journal at ${path}: run claims serve, or claims batch on the local stack (batch --in-process keeps no journal), with this data directory first`,
        );
      const lines = readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .flatMap((l, i) => {
          try {
            return [JSON.parse(l) as JournalLine];
          } catch {
            throw new CliError(`${path} line ${i + 1} is not JSON`);
          }
        });
      const facts = settlementFacts(lines);
      const result = reconcile(facts, o.since);
      const credit = creditExecutions(lines);
      const split = cashAndCredit(facts, credit, o.since);
      // What is shown apart is of the cash refunds: a credit is no money paid back, and is never added to cash.
      const cashFacts = facts.filter((f) => !credit.has(f.execution_id));
      const apart = shownApart(cashFacts, reconcile(cashFacts, o.since), o.since);
      const bound = new Date(Date.now() - (o.pendingHours ?? DEFAULT_PENDING_HOURS) * 3_600_000).toISOString();
      const failing = unreconciled(result, bound);
      const due = refundsDueInJournal(lines, result, Date.now());
      if (o.json) {
        const refunds = result.refunds.map(({ authorised_at: _at, ...r }) =>
          credit.has(r.execution_id) ? { ...r, outcome: "STORE_CREDIT" } : r,
        );
        process.stdout.write(
          `${JSON.stringify({ refunds, totals: split.totals, ...(split.credit ? { credit: split.credit } : {}), apart, refunds_due: due }, null, 2)}\n`,
        );
      } else {
        for (const r of result.refunds)
          process.stdout.write(
            `${r.status.padEnd(8)} ${r.claim_id} ${r.execution_id} ${r.amount_eur.toFixed(2)} ${r.currency ?? "EUR"}${credit.has(r.execution_id) ? " store credit" : ""}${r.provider_ref ? ` ${r.provider_ref}` : ""}${r.failure_reason ? ` — ${r.failure_reason}` : ""}\n`,
          );
        for (const line of due) process.stdout.write(`${refundDueText(line)}\n`);
        const t = split.totals;
        const cashCount = result.refunds.length - (split.credit?.count ?? 0);
        process.stdout.write(
          `${cashCount} refunds: settled ${t.settled_eur.toFixed(2)} EUR${apart.paid_out_of_band.count > 0 ? ` (${apart.paid_out_of_band.eur.toFixed(2)} EUR of it CLOSEd as paid out of band)` : ""}, pending ${t.pending_eur.toFixed(2)} EUR, failed ${t.failed_eur.toFixed(2)} EUR${apart.closed_unpaid.count > 0 ? `; closed unpaid ${apart.closed_unpaid.count} (${apart.closed_unpaid.eur.toFixed(2)} EUR, not refunded)` : ""}${Object.entries(
            t.currencies ?? {},
          )
            .map(([c, x]) => `; in ${c}: settled ${x.settled}, pending ${x.pending}, failed ${x.failed}`)
            .join(
              "",
            )}${split.credit ? `; store credit, not cash (${split.credit.count}, its base without the bonus): ${totalsText(split.credit.totals)}` : ""}${failing.length > 0 ? `; ${failing.length} need attention` : ""}\n`,
        );
      }
      process.exitCode = failing.length > 0 ? 1 : 0;
    });
}
