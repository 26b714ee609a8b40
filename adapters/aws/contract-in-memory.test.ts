// The shared port contracts against the in-memory implementations of core/ (the reference behaviour).
import { createInMemoryClaimRepository, createInMemorySessionRepository, createInMemoryVerdictRepository } from "../../core/claims/pipeline/in-memory.ts";
import { createInMemoryAuditLog } from "../../core/dir/audit.ts";
import { createInMemoryContextStore } from "../../core/dir/context-store.ts";
import { createInMemoryRefundLedger } from "../../core/dir/ledger.ts";
import {
  describeAuditLogContract,
  describeClaimRepositoryContract,
  describeContextStoreContract,
  describeRefundLedgerContract,
  describeSessionRepositoryContract,
  describeVerdictRepositoryContract,
} from "./contract.test-kit.ts";

describeClaimRepositoryContract("in-memory", async () => createInMemoryClaimRepository());
describeSessionRepositoryContract("in-memory", async () => createInMemorySessionRepository());
describeVerdictRepositoryContract("in-memory", async () => createInMemoryVerdictRepository());
describeRefundLedgerContract("in-memory", async () => createInMemoryRefundLedger());
describeAuditLogContract("in-memory", async () => createInMemoryAuditLog());
describeContextStoreContract("in-memory", async (orders) => createInMemoryContextStore(orders));
