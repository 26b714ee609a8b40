// The shared port contracts against the in-memory implementations of pipeline/ (the reference behaviour).
import {
  createInMemoryAuditLog,
  createInMemoryClaimRepository,
  createInMemoryContextStore,
  createInMemoryRefundLedger,
  createInMemoryReviewRepository,
  createInMemorySessionRepository,
  createInMemorySettlementRepository,
  createInMemoryVerdictRepository,
} from "../../pipeline/in-memory.ts";
import * as contracts from "./contract.test-kit.ts";

contracts.describeClaimRepositoryContract("in-memory", async () => createInMemoryClaimRepository());
contracts.describeSessionRepositoryContract("in-memory", async () => {
  const audit = createInMemoryAuditLog();
  return { repo: createInMemorySessionRepository(audit), audit };
});
contracts.describeVerdictRepositoryContract("in-memory", async () => createInMemoryVerdictRepository());
contracts.describeRefundLedgerContract("in-memory", async () => createInMemoryRefundLedger());
contracts.describeAuditLogContract("in-memory", async () => createInMemoryAuditLog());
contracts.describeServedViewContract("in-memory", async () => ({
  claims: createInMemoryClaimRepository(),
  audit: createInMemoryAuditLog(),
}));
contracts.describeReviewRepositoryContract("in-memory", async () => createInMemoryReviewRepository());
contracts.describeSettlementRepositoryContract("in-memory", async () => createInMemorySettlementRepository());
contracts.describeContextStoreContract("in-memory", async (orders) => createInMemoryContextStore(orders));
