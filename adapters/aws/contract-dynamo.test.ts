// The shared port contracts against the DynamoDB adapters on dynalite, through the real SDK.
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
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { seedOrders } from "./table.ts";

const aws = useEmulatedAws();
const ports = async () => createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });

describeClaimRepositoryContract("DynamoDB", async () => (await ports()).claims);
describeSessionRepositoryContract("DynamoDB", async () => {
  const { sessions, audit } = await ports();
  return { repo: sessions, audit };
});
describeVerdictRepositoryContract("DynamoDB", async () => (await ports()).verdicts);
describeRefundLedgerContract("DynamoDB", async () => (await ports()).ledger);
describeAuditLogContract("DynamoDB", async () => (await ports()).audit);
describeServedViewContract("DynamoDB", async () => {
  const { claims, audit } = await ports();
  return { claims, audit };
});
describeReviewRepositoryContract("DynamoDB", async () => (await ports()).reviews);
describeSettlementRepositoryContract("DynamoDB", async () => (await ports()).settlements);
describeContextStoreContract("DynamoDB", async (orders) => {
  const tableName = await aws.newTable();
  await seedOrders(aws.doc, tableName, orders);
  return createDynamoPorts({ client: aws.doc, tableName }).orders;
});
