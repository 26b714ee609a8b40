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
import {
  describeAuditLogContract,
  describeClaimRepositoryContract,
  describeContextStoreContract,
  describeRefundLedgerContract,
  describeReviewRepositoryContract,
  describeServedViewContract,
  describeSessionRepositoryContract,
  describeSettlementRepositoryContract,
  describeVerdictRepositoryContract,
} from "./contract.test-kit.ts";

describeClaimRepositoryContract("in-memory", async () => createInMemoryClaimRepository());
describeSessionRepositoryContract("in-memory", async () => {
  const audit = createInMemoryAuditLog();
  return { repo: createInMemorySessionRepository(audit), audit };
});
describeVerdictRepositoryContract("in-memory", async () => createInMemoryVerdictRepository());
describeRefundLedgerContract("in-memory", async () => createInMemoryRefundLedger());
describeAuditLogContract("in-memory", async () => createInMemoryAuditLog());
describeServedViewContract("in-memory", async () => ({
  claims: createInMemoryClaimRepository(),
  audit: createInMemoryAuditLog(),
}));
describeReviewRepositoryContract("in-memory", async () => createInMemoryReviewRepository());
describeSettlementRepositoryContract("in-memory", async () => createInMemorySettlementRepository());
describeContextStoreContract("in-memory", async (orders) => createInMemoryContextStore(orders));
