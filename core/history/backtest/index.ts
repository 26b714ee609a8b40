// Policy backtest (docs/backtest.md): `backtest` re-decides every recorded kernel decision under a candidate policy
// (backtest.ts), reading the recorded histories into a timeline (timeline.ts) and simulating the ledger (ledger.ts).
export { backtest, readHistories } from "./backtest.ts";
export * from "./types.ts";
