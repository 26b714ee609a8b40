// Every shared port contract against the DynamoDB adapters on a table the caller makes (dynalite in
// contract-dynamo.test.ts, moto in contract-moto.test.ts): one list of contracts, run once per implementation.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
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
import { createDynamoPorts } from "./dynamo-ports.ts";
import { seedOrders } from "./table.ts";

/** A fresh table for one contract case, and the document client that reaches it. */
export type ContractTable = { readonly doc: DynamoDBDocumentClient; readonly tableName: string };

/** Runs the port contracts, labelled `label`, each case on a table of its own from `newTable`. */
export function describeDynamoPortContracts(label: string, newTable: () => Promise<ContractTable>): void {
  const ports = async () => {
    const { doc, tableName } = await newTable();
    return createDynamoPorts({ client: doc, tableName });
  };
  describeClaimRepositoryContract(label, async () => (await ports()).claims);
  describeSessionRepositoryContract(label, async () => {
    const { sessions, audit } = await ports();
    return { repo: sessions, audit };
  });
  describeVerdictRepositoryContract(label, async () => (await ports()).verdicts);
  describeRefundLedgerContract(label, async () => (await ports()).ledger);
  describeAuditLogContract(label, async () => (await ports()).audit);
  describeServedViewContract(label, async () => {
    const { claims, audit } = await ports();
    return { claims, audit };
  });
  describeReviewRepositoryContract(label, async () => (await ports()).reviews);
  describeSettlementRepositoryContract(label, async () => (await ports()).settlements);
  describeContextStoreContract(label, async (orders) => {
    const { doc, tableName } = await newTable();
    await seedOrders(doc, tableName, orders);
    return createDynamoPorts({ client: doc, tableName }).orders;
  });
}
