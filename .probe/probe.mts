import { readFileSync } from "node:fs";
import { chaosEnv, runChaosFlow } from "/work/wt-i33e/chaos/flow.ts";
const [seed, flow, claim] = process.argv.slice(2);
const env = chaosEnv(readFileSync("/work/wt-i33e/scenarios/config.yaml", "utf8"), "config.yaml");
const r = await runChaosFlow(env, Number(seed), Number(flow), { keep: true });
console.log(r.violations);
console.log(JSON.stringify(r.plan.returns));
const o = r.observation!;
for (const e of o.audit.filter((e) => e.details.claim_id === claim))
  console.log(e.created_at, e.dfid.slice(0, 12), e.event_type, e.state, JSON.stringify(e.details).slice(0, 160));
console.log(JSON.stringify(o.claims.find((c) => c.claim_id === claim), null, 0).slice(0, 1500));
console.log(JSON.stringify(o.reviews.filter((c) => c.claim_id === claim)));
