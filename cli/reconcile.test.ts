// `claims reconcile` on a bus journal written here: in the test's process (reconcile.test-kit.ts), and once as a user
// runs it (a child process of bin/claims.mjs: the missing journal's exit 2 and message).
import { describe, expect, it } from "vitest";
import { reconcileJournal as reconcile, runClaims, tempDataDir } from "./reconcile.test-kit.ts";
import { join } from "node:path";

const now = new Date().toISOString();
const executed = (id: string, amount: number, extra: Record<string, unknown> = {}, time = now) => ({
  "detail-type": "RefundExecuted",
  time,
  detail: {
    execution_id: id,
    claim_id: `clm_${id}`,
    dfid: "d",
    order_id: "o",
    amount_eur: amount,
    verdict_id: "v",
    ...extra,
  },
});
const settled = (id: string, type = "RefundSettled", extra: Record<string, unknown> = {}) => ({
  "detail-type": type,
  time: now,
  detail: {
    execution_id: id,
    claim_id: `clm_${id}`,
    dfid: "d",
    order_id: "o",
    amount_eur: 1,
    provider: "stripe",
    ...extra,
  },
});

describe("claims reconcile", () => {
  it("exits 0 when every refund settled; --json prints refunds and totals; a simulation's refund is not listed", async () => {
    const out = await reconcile(
      [
        executed("exe_a", 10.1),
        executed("exe_b", 20.2),
        executed("exe_sim", 5, { simulation_id: "sim_1" }),
        settled("exe_a", "RefundSettled", { provider_ref: "re_a" }),
        settled("exe_b"),
      ],
      ["--json"],
    );
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout) as { refunds: { execution_id: string; status: string }[]; totals: unknown };
    expect(body.refunds).toEqual([
      { claim_id: "clm_exe_a", execution_id: "exe_a", amount_eur: 10.1, status: "SETTLED", provider_ref: "re_a" },
      { claim_id: "clm_exe_b", execution_id: "exe_b", amount_eur: 20.2, status: "SETTLED" },
    ]);
    expect(body.totals).toEqual({ settled_eur: 30.3, pending_eur: 0, failed_eur: 0 });
  });

  it("names each unsettled refund near its legal deadline with its due date and days left, in text and --json", async () => {
    // A minute more than eleven days: run in the same millisecond, exactly eleven days left 3 days to the due date,
    // not 2 (found by a fresh-clone run: `days_left` floors the time left).
    const elevenDaysAgo = new Date(Date.now() - 11 * 86_400_000 - 60_000).toISOString();
    const lines = [executed("exe_old", 10, {}, elevenDaysAgo), executed("exe_new", 10), settled("exe_new")];
    const text = await reconcile(lines);
    expect(text.stdout).toMatch(/^DUE SOON clm_exe_old refund due \S+ \(2 days left\)$/m);
    expect(text.stdout).not.toMatch(/DUE SOON clm_exe_new/);
    const json = JSON.parse((await reconcile(lines, ["--json"])).stdout) as { refunds_due: unknown };
    expect(json.refunds_due).toEqual([
      {
        claim_id: "clm_exe_old",
        due_at: new Date(Date.parse(elevenDaysAgo) + 14 * 86_400_000).toISOString(),
        days_left: 2,
      },
    ]);
  });

  it("exits 1 on a failed refund and names its reason", async () => {
    const out = await reconcile([
      executed("exe_a", 10),
      settled("exe_a", "RefundFailed", { failure_reason: "expired_card" }),
    ]);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/FAILED +clm_exe_a exe_a 10\.00 EUR — expired_card/);
  });

  it("a failed refund a reviewer CLOSEd is left out; one RETRYed counts by its new execution", async () => {
    const decided = (id: string, decision: string, execution: string) => ({
      "detail-type": "ReviewDecided",
      time: now,
      detail: { review_id: `rev_${id}`, claim_id: `clm_${id}`, dfid: "d", decision, execution_id: execution },
    });
    const lines = [
      executed("exe_a", 10),
      settled("exe_a", "RefundFailed", { failure_reason: "expired_card" }),
      decided("exe_a", "CLOSE", "exe_a"),
      executed("exe_c", 30),
      settled("exe_c", "RefundFailed"),
      {
        ...decided("exe_c", "CLOSE", "exe_c"),
        detail: { ...decided("exe_c", "CLOSE", "exe_c").detail, paid_out_of_band: true },
      },
      executed("exe_b", 20),
      settled("exe_b", "RefundFailed"),
      decided("exe_b", "RETRY", "exe_b2"),
      executed("exe_b2", 20, { claim_id: "clm_exe_b", retry_of: "exe_b" }),
      settled("exe_b2", "RefundSettled", { claim_id: "clm_exe_b" }),
    ];
    const out = await reconcile(lines, ["--json"]);
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout) as { refunds: { execution_id: string; status: string }[]; totals: unknown };
    expect(body.refunds.map((r) => [r.execution_id, r.status])).toEqual([
      ["exe_c", "PAID_OUT_OF_BAND"],
      ["exe_b2", "SETTLED"],
    ]);
    expect(body.totals).toEqual({ settled_eur: 50, pending_eur: 0, failed_eur: 0 });
    // Shown apart: 30 of the settled 50 EUR were CLOSEd as paid out of band; exe_a (10 EUR) was CLOSEd unpaid.
    expect(body).toMatchObject({
      apart: {
        paid_out_of_band: { count: 1, eur: 30 },
        closed_unpaid: { count: 1, eur: 10, refunds: [{ execution_id: "exe_a", amount_eur: 10 }] },
      },
    });
    const human = await reconcile(lines);
    expect(human.stdout).toContain(
      "2 refunds: settled 50.00 EUR (30.00 EUR of it CLOSEd as paid out of band), pending 0.00 EUR, failed 0.00 EUR; closed unpaid 1 (10.00 EUR, not refunded)",
    );
  });

  it("a pending refund fails only past the bound", async () => {
    const old = new Date(Date.now() - 5 * 3_600_000).toISOString();
    expect((await reconcile([executed("exe_a", 10, {}, old)])).code).toBe(0);
    expect((await reconcile([executed("exe_a", 10, {}, old)], ["--pending-hours", "1"])).code).toBe(1);
    expect((await reconcile([executed("exe_a", 10, {}, old)], ["--since", now])).stdout).toMatch(/^0 refunds/);
  });

  it("exits 2 on a usage error", async () => {
    expect((await reconcile([], ["--since", "yesterday"])).code).toBe(2);
    expect((await reconcile([], ["--pending-hours", "-1"])).code).toBe(2);
  });

  it("exits 2 naming the missing journal and how to get one when the data directory has none", async () => {
    const dir = tempDataDir();
    const failed = await runClaims(["reconcile", "--data-dir", dir]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain(`no bus journal at ${join(dir, "events.jsonl")}`);
    expect(failed.stderr).toMatch(/batch --in-process keeps no journal/);
  });
});
