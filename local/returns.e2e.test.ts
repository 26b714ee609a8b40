// End to end over HTTP against `claims serve` (a child process) with a policy that asks for returns (docs/returns.md):
// an ACCEPT waits AWAITING_RETURN with ReturnRequested on the bus and nothing paid; the warehouse's events, posted
// twice and out of order, pay the reserved refund once when pay_on (delivered) arrives; bad input, an unknown claim
// and an event for a claim no longer awaiting its return are refused with their codes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkMoneyInvariants, fromJournal } from "../pipeline/testing/money-invariants.ts";
import { startServe } from "./serve-child.test-kit.ts";
import type { ServeChild } from "./serve-child.test-kit.ts";
import { TEST_NOW } from "./testing/stack-fixture.ts";

let dataDir: string;
let serve: ServeChild;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-returns-e2e-"));
  // The bundled config's own return policy (sports gear) replaced by one that asks every category's item back.
  const bundled = readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8").replace(
    /^( *)returns:\n(?:\1 {2}.*\n)+/m,
    "",
  );
  const config = bundled.replace(
    /^( *)customer_limits: /m,
    "$1returns: { return_required: true, pay_on: delivered, keep_item_below: { EUR: 50 } }\n$1customer_limits: ",
  );
  expect(config).not.toBe(bundled);
  writeFileSync(join(dataDir, "config.yaml"), config);
  serve = await startServe({
    dataDir,
    args: ["--now", new Date(TEST_NOW).toISOString(), "--config", join(dataDir, "config.yaml")],
  });
}, 120_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Polls the claim until it leaves RECEIVED / RUNNING. */
async function settled(claimId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const res = await serve.api("GET", `/claims/${claimId}`);
    if (res.status === 200 && !["RECEIVED", "RUNNING"].includes(String(res.body.status))) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`claim ${claimId} never settled`);
}

describe("returns over HTTP", () => {
  let claimId = "";
  const at = new Date(TEST_NOW).toISOString();
  const post = (event: string, event_id: string, id = claimId) =>
    serve.api("POST", `/claims/${id}/return-events`, { event_id, event, at, carrier_ref: "00340434161094042557" });

  it("keeps a return-required ACCEPT waiting AWAITING_RETURN, its refund reserved and not executed", async () => {
    const claim = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };
    const submitted = await serve.api("POST", "/claims", { claim });
    expect(submitted.status).toBe(202);
    claimId = submitted.body.claim_id;
    const view = await settled(claimId);
    expect(view).toMatchObject({ status: "AWAITING_RETURN", verdict: "ACCEPT", executed: false });
    expect(view.return).toMatchObject({ pay_on: "delivered", lines: [{ line_id: "1", quantity: 1 }] });
    expect(String(view.customer_message)).toContain("send the item back");
    const types = serve.events().map((e) => e["detail-type"]);
    expect(types).toContain("ReturnRequested");
    expect(types).not.toContain("RefundExecuted");
    const listed = await serve.api("GET", "/claims?status=AWAITING_RETURN");
    expect(listed.body.items.map((c: { claim_id: string }) => c.claim_id)).toEqual([claimId]);
  });

  it("refuses bad input naming the field, and an unknown claim", async () => {
    const bad = await serve.api("POST", `/claims/${claimId}/return-events`, { event_id: "x", event: "lost", at });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "event" }] });
    expect((await post("delivered", "x", "clm_unknown")).status).toBe(404);
    const noToken = await serve.api("POST", `/claims/${claimId}/return-events`, {}, { token: "wrong" });
    expect(noToken.status).toBe(403);
  });

  it("pays the reserved refund once when the delivery comes, however often and in whatever order events arrive", async () => {
    expect((await post("in_transit", "scan-1")).body).toMatchObject({ status: "AWAITING_RETURN", decision: "WAIT" });
    const [a, b] = await Promise.all([post("delivered", "deliver-1"), post("delivered", "deliver-1")]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await post("in_transit", "scan-1")).status).toBe(200);
    const late = await post("inspected_ok", "inspect-1");
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("NOT_AWAITING_RETURN");
    const view = await serve.api("GET", `/claims/${claimId}`);
    expect(view.body).toMatchObject({ status: "DECIDED", executed: true, return: { outcome: "PAID" } });
    const journal = serve.events();
    const refunds = journal.filter((e) => e["detail-type"] === "RefundExecuted");
    const asked = journal.find((e) => e["detail-type"] === "ReturnRequested")!;
    expect(new Set(refunds.map((e) => e.detail.execution_id))).toEqual(new Set([asked.detail.execution_id]));
    const summary = checkMoneyInvariants(fromJournal(journal), {
      orderAmountEur: (id) => (id === "ord_001" ? 299.99 : undefined),
      limitEur: 500,
    });
    expect(summary.violations).toEqual([]);
  });

  it("pays a refund below keep_item_below at once", async () => {
    const claim = { order_id: "ord_008", amount_eur: 45, category: "home", reason: "Cracked" };
    const submitted = await serve.api("POST", "/claims", { claim });
    const view = await settled(submitted.body.claim_id);
    expect(view).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect(view.return).toBeUndefined();
  });
});
