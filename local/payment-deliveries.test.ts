// The refund executor's deliveries journaled for claims serve (issue 39): what is due and not done survives a stop,
// a delivery being attempted is not delivered twice at once, the bus's own retries come before a redelivery, and the
// file stays small.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BusEvent } from "./eventbridge/server.ts";
import { openPaymentDeliveries, readDeliveries } from "./payment-deliveries.ts";

const dirs: string[] = [];
const journal = () => {
  const dir = mkdtempSync(join(tmpdir(), "claims-deliveries-"));
  dirs.push(dir);
  return join(dir, "payments.jsonl");
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const event = (id: string): BusEvent =>
  ({
    id,
    version: "0",
    account: "000000000000",
    time: "2026-06-01T12:00:00Z",
    region: "us-east-1",
    resources: [],
    source: "claims.kernel",
    "detail-type": "RefundExecuted",
    detail: { execution_id: `exe_${id}`, claim_id: `clm_${id}` },
  }) as BusEvent;

describe("the refund executor's delivery journal", () => {
  it("keeps what is due and not done across a stop, in order; a torn last line is ignored", () => {
    const path = journal();
    const a = openPaymentDeliveries(path);
    a.due(event("1"));
    a.due(event("2"));
    a.due(event("2"));
    a.due(event("3"));
    a.done("2");
    a.done("9");
    a.close();
    appendFileSync(path, '{"op":"done","id":"1"'); // the kill came mid-write
    expect(readDeliveries(path).map((e) => e.id)).toEqual(["1", "3"]);
    const b = openPaymentDeliveries(path);
    expect(b.dueCount()).toBe(2);
    // Recovered deliveries are made again at once, whatever the grace.
    expect(b.redeliverable(0, 60_000).map((e) => e.id)).toEqual(["1", "3"]);
    b.close();
  });

  it("redelivers a new delivery only after the grace (the bus retries it first), never one being attempted", async () => {
    let now = 1_000;
    const d = openPaymentDeliveries(journal(), { now: () => now });
    d.due(event("a"));
    expect(d.redeliverable(now + 29_999)).toEqual([]);
    expect(d.redeliverable(now + 30_000).map((e) => e.id)).toEqual(["a"]);
    let release: () => void = () => undefined;
    const attempt = d.track("a", () => new Promise<void>((resolve) => (release = resolve)));
    now += 60_000;
    expect(d.redeliverable(now)).toEqual([]);
    release();
    await attempt;
    expect(d.redeliverable(now).map((e) => e.id)).toEqual(["a"]);
    d.done("a");
    expect(d.redeliverable(now)).toEqual([]);
    d.close();
  });

  it("rewrites the file with only the due deliveries once it has grown past them", () => {
    const path = journal();
    const d = openPaymentDeliveries(path, { slack: 10 });
    for (let i = 0; i < 100; i++) {
      d.due(event(`e${i}`));
      if (i !== 50) d.done(`e${i}`);
    }
    d.close();
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.length).toBeLessThan(20);
    expect(readDeliveries(path).map((e) => e.id)).toEqual(["e50"]);
  });
});
