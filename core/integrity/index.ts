// Barrel of the decision-integrity module: proposals, contracts, registry, verdicts, audit, time.
export * from "./audit.ts";
export * from "./contracts.ts";
export * from "./errors.ts";
export * from "./proposal.ts";
export * from "./registry.ts";
export * from "./time.ts";
export * from "./verdict.ts";
