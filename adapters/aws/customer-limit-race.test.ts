// N claims of one customer on N orders racing through the real pipeline with the DynamoDB ledger on dynalite (real
// SDK, real conditional writes): only up to the customer limit are refunded automatically, the rest go to a person,
// and the window holds exactly the refunds made. The figures of the race are printed for the record.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { parseConfig } from "../../core/claim/config.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import type { Order } from "../../core/integrity/index.ts";
import { createInProcessPipeline } from "../../pipeline/in-process.ts";
import type { RefundLedger } from "../../pipeline/ports.ts";
import { raceClaims, raceOutcome } from "../../pipeline/race.test-kit.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();
const NOW = Date.parse("2026-06-01T12:00:00Z");
const N = 12;

it(`lets exactly max_automatic_refunds of ${N} racing claims of one customer through on DynamoDB`, async () => {
  const config = parseConfig(
    readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8"),
    "config.yaml",
    NOW,
  );
  const limits = { window_days: 30, max_automatic_refunds: 3, max_automatic_eur: 500 };
  const contract = { ...config.agent.contract, customer_limits: limits };
  const orders: Order[] = Array.from({ length: N }, (_, i) => ({
    order_id: `ord_c${i}`,
    purchase_date: new Date(NOW - 2 * 86_400_000).toISOString(),
    category: "electronics",
    amount: 100,
    currency: "EUR",
    customer_id: "cus_1",
  }));
  const dynamo = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() }).ledger;
  let conflicts = 0;
  const ledger: RefundLedger = {
    ...dynamo,
    async reserveCustomer(request) {
      const out = await dynamo.reserveCustomer(request);
      conflicts += out.conflicts;
      return out;
    },
  };
  const p = createInProcessPipeline({
    agent: { ...config.agent, contract },
    orders,
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
    overrides: { ledger },
  });
  await raceClaims(
    p,
    orders.map((o) => ({
      claim: { order_id: o.order_id, amount_eur: 40, category: "electronics", reason: "broken", customer_id: "cus_1" },
    })),
  );
  const { accepted, escalated, refunds } = await raceOutcome(p, N);
  const lostRaces = p.auditEvents().filter((e) => e.event_type === "CLAIM_REFUND_NOT_EXECUTED").length;
  console.info(
    `customer-limit race on dynalite: N=${N}, accepted ${accepted.length}, escalated ${escalated.length}, ` +
      `window write conflicts retried ${conflicts}, reservations refused and decided again ${lostRaces}`,
  );
  expect(accepted).toHaveLength(3);
  expect(escalated).toHaveLength(N - 3);
  expect(escalated.every((r) => r?.reason_code === "CUSTOMER_LIMIT_EXCEEDED")).toBe(true);
  expect(refunds).toHaveLength(3);
  const window = await ledger.getCustomerWindow("cus_1");
  expect(window?.reservations.map((r) => r.claim_id).sort()).toEqual(accepted.map((r) => r!.claim_id).sort());
});
