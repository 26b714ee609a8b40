// The shared port contracts against the in-memory implementations of core/ (the reference behaviour).
import { createInMemoryClaimRepository, createInMemorySessionRepository, createInMemoryVerdictRepository } from "../../pipeline/in-memory.ts";
import { createInMemoryAuditLog } from "../../pipeline/in-memory.ts";
import { createInMemoryContextStore } from "../../pipeline/in-memory.ts";
import { createInMemoryRefundLedger } from "../../pipeline/in-memory.ts";
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
