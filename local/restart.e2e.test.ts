// `claims serve` survives `kill -9` (docs/local-stack.md): claims are submitted with Idempotency-Keys, the process is
// SIGKILLed while claims are in flight and submissions still arriving, and a new `claims serve` on the same
// data directory takes over. Every claim that was answered 202 ends final, the client's retries with the same
// keys get the same claims (and create no others), nothing is refunded twice or beyond its order, and the
// decisions taken across the kill replay byte for byte — through the running server and from the files.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "../core/claim/config.ts";
import { checkMoneyInvariants, fromJournal } from "../pipeline/testing/money-invariants.ts";
import { claimsInProcess } from "../cli/cli-in-process.test-kit.ts";
import { finalClaims, startServe } from "./serve-child.test-kit.ts";
import type { ServeChild } from "./serve-child.test-kit.ts";
import { CONFIG_PATH } from "./testing/stack-fixture.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const ORDERS = new Map(
  parseConfig(readFileSync(CONFIG_PATH, "utf8"), "config.yaml", Date.now()).orders.map((o) => [
    o.order_id,
    orderTotalMajor(o),
  ]),
);
/** `claims ARGS` beside the server, in this process (cli/cli-in-process.test-kit.ts): the server is the child here. */
const claims = (args: string[], env: Record<string, string> = {}) =>
  claimsInProcess(args, { LLM_PROVIDER: "rules", ...env });

const CLAIMS = 60;
/** Answers received before the kill. */
const KILL_AFTER = 40;

/** Claim i: ten 100 EUR claims on ord_016 (1200 EUR; the limit lets 5 through), small ones elsewhere, free text now and then. */
function body(i: number): unknown {
  if (i % 6 === 0)
    return { claim: { order_id: "ord_016", amount_eur: 100, category: "electronics", reason: `part ${i} broke` } };
  if (i % 6 === 3)
    return {
      claim_text: `I bought order ord_00${(i % 9) + 1} for ${(i % 40) + 1} EUR and it stopped working (claim ${i})`,
    };
  return {
    claim: {
      order_id: `ord_0${String((i % 17) + 1).padStart(2, "0")}`,
      amount_eur: (i % 7) + 5,
      category: "electronics",
      reason: `claim ${i}`,
    },
  };
}

const dataDir = mkdtempSync(join(tmpdir(), "claims-restart-e2e-"));
const tokens = { apiToken: "restart-intake-token", reviewerToken: "restart-reviewer-token" };
const servers: ServeChild[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** POSTs claim i with its key; undefined when the request got no answer (the server died under it). */
async function submit(serve: ServeChild, i: number): Promise<{ status: number; claimId?: string } | undefined> {
  try {
    const res = await serve.api("POST", "/claims", body(i), { headers: { "idempotency-key": `restart-${i}` } });
    return { status: res.status, ...(res.status === 202 ? { claimId: res.body.claim_id as string } : {}) };
  } catch {
    return undefined;
  }
}

describe("claims serve after kill -9", () => {
  it("loses nothing it accepted: every 202 ends final, retries get the same claims, no refund twice, decisions replay", async () => {
    const first = await startServe({ dataDir, ...tokens });
    servers.push(first);
    const answered = new Map<number, string>();
    let inFlightAtKill: string[] = [];
    let killed: Promise<void> | undefined;
    // Eight clients submit; once KILL_AFTER claims were answered 202 the server is killed under them.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < CLAIMS && !killed) {
          const i = next++;
          const answer = await submit(first, i);
          if (answer?.claimId) answered.set(i, answer.claimId);
          if (answered.size >= KILL_AFTER && !killed) {
            killed = (async () => {
              const open = await first.api("GET", "/claims?status=RECEIVED,RUNNING&limit=200");
              inFlightAtKill = (open.body.items as { claim_id: string }[]).map((v) => v.claim_id);
              await first.kill();
            })();
          }
        }
      }),
    );
    await killed;
    expect(answered.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(inFlightAtKill.length).toBeGreaterThan(0);

    const restartedAt = performance.now();
    const second = await startServe({ dataDir, ...tokens });
    servers.push(second);
    const readyMs = performance.now() - restartedAt;
    expect(second.stdout()).toMatch(/recovered \d+ queued message\(s\); re-drove \d+ open claim\(s\)/);

    // The client retries every claim with its key: the answered ones get their claim back, the rest are taken now.
    const retried = await Promise.all(Array.from({ length: CLAIMS }, (_, i) => submit(second, i)));
    for (const [i, answer] of retried.entries()) {
      expect(answer?.status, `claim ${i}`).toBe(202);
      if (answered.has(i)) expect(answer?.claimId, `claim ${i}`).toBe(answered.get(i));
    }
    const ids = retried.map((a) => a!.claimId!);
    expect(new Set(ids).size).toBe(CLAIMS);

    const views = await finalClaims(second, ids);
    const recoveredMs = performance.now() - restartedAt;
    expect(views.every((v) => v.status === "DECIDED" || v.status === "NEEDS_REVIEW")).toBe(true);
    // Nothing else was created: the store lists exactly these claims.
    const listed = await second.api("GET", "/claims?limit=200");
    expect((listed.body.items as { claim_id: string }[]).map((v) => v.claim_id).sort()).toEqual([...ids].sort());

    // Reviews opened before or after the kill are there, pending; the ledger kept the automatic limit on ord_016 across it (checked below).
    const escalated = views.filter((v) => v.verdict === "ESCALATE");
    expect(escalated.length).toBeGreaterThan(0);
    expect(escalated.every((v) => (v.review as { status?: string } | undefined)?.status === "PENDING")).toBe(true);
    const money = checkMoneyInvariants(fromJournal(second.events()), {
      orderAmountEur: (id) => ORDERS.get(id),
      limitEur: 500,
    });
    expect(money.violations).toEqual([]);
    expect(money.refunds).toBe(views.filter((v) => v.verdict === "ACCEPT").length);
    expect(views.filter((v) => v.verdict === "ACCEPT" && v.executed === true)).toHaveLength(money.accepts);

    // Decisions that were in flight at the kill replay identically, through the running server's store.
    const replayed = inFlightAtKill
      .filter((id) => views.find((v) => v.claim_id === id)?.status === "DECIDED")
      .slice(0, 3);
    for (const id of replayed) {
      const replay = await claims(["replay", id, "--data-dir", dataDir]);
      expect(replay.stdout, `${id}: ${replay.stderr}`).toContain("Identical");
      expect(replay.code).toBe(0);
    }
    const list = await claims(["list", "--data-dir", dataDir, "--limit", "200", "--json"], {
      CLAIMS_API_TOKEN: tokens.apiToken,
    });
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { items: { claim_id: string }[] }).items).toHaveLength(CLAIMS);

    // And from the files once the server stopped.
    expect(await second.stop()).toBe(0);
    if (replayed[0]) {
      const offline = await claims(["replay", replayed[0], "--data-dir", dataDir, "--json"]);
      expect(offline.code, offline.stderr).toBe(0);
      expect(JSON.parse(offline.stdout)).toMatchObject({ claimId: replayed[0], status: "IDENTICAL" });
    }
    const report = await claims(["report", "--served", "--data-dir", dataDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(join(dataDir, "served", "report.html"), "utf8")).toContain(ids[0]!);

    console.log(
      `[restart figures] ${answered.size} claims answered 202 before the kill, ${inFlightAtKill.length} claims open (RECEIVED or RUNNING) at the kill; ` +
        `after the restart all ${CLAIMS} claims final (${views.filter((v) => v.status === "DECIDED").length} DECIDED, ${views.filter((v) => v.status === "NEEDS_REVIEW").length} NEEDS_REVIEW); ` +
        `ready ${(readyMs / 1000).toFixed(1)} s after the restart, every claim final ${(recoveredMs / 1000).toFixed(1)} s after it; ${money.refunds} refunds, none twice`,
    );
  }, 600_000);
});
