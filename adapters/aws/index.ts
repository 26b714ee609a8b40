// AWS adapters of the claims pipeline: DynamoDB (single table), SQS work queues, EventBridge publisher,
// and the request counter for the benchmark. Every factory takes injected SDK clients.
export * from "./dynamo-ports.ts";
export * from "./compact.ts";
export { createDynamoAuditLog } from "./dynamo-audit.ts";
export { claimIndexShard, countOpenClaims, createDynamoClaimRepository } from "./dynamo-claims.ts";
export type { DynamoContext } from "./dynamo-context.ts";
export { createDynamoRefundLedger } from "./dynamo-ledger.ts";
export { createDynamoBatchJournal } from "./dynamo-llm-batches.ts";
export { createDynamoContextStore } from "./dynamo-orders.ts";
export { createDynamoSessionRepository } from "./dynamo-sessions.ts";
export { createDynamoVerdictRepository } from "./dynamo-verdicts.ts";
export * from "./errors.ts";
export * from "./eventbridge-publisher.ts";
export * from "./request-counter.ts";
export * from "./retry.ts";
export * from "./sqs-work-queues.ts";
export * from "./table.ts";
