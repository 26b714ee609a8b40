// Barrel of the decision-integrity module: proposals, contracts, registry, ledger, money, verdicts, audit, ports.
export * from "./audit.ts";
export * from "./orders.ts";
export * from "./contracts.ts";
export * from "./errors.ts";
export * from "./ledger.ts";
export * from "./money.ts";
export * from "./proposal.ts";
export * from "./registry.ts";
export * from "./time.ts";
export * from "./verdict.ts";
export * from "./customer-window.ts";
