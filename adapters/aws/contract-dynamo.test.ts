// The shared port contracts against the DynamoDB adapters on dynalite, through the real SDK.
import { describeDynamoPortContracts } from "./contract-dynamo.test-kit.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();

describeDynamoPortContracts("DynamoDB", async () => ({ doc: aws.doc, tableName: await aws.newTable() }));
