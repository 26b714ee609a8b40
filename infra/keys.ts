// The stage's KMS key of personal data (issue 38, docs/customer-data.md): each claim's AES-256 data key is made by
// KMS under it and kept only wrapped, in the table (adapters/aws/kms-keys.ts). Erasing a customer destroys their
// claims' wrapped data keys; this key stays. Linked for its ARN only: the functions' KMS actions are app/manifest.ts's.
import { APP_NAME } from "../app/manifest.ts";

/** The key: symmetric, rotated yearly by KMS (old versions keep unwrapping what they wrapped), 30 days to delete. */
export const personalDataKms = new aws.kms.Key("PersonalDataKms", {
  description: `${APP_NAME} ${$app.stage}: wraps the data keys of customers' personal data (docs/customer-data.md)`,
  keyUsage: "ENCRYPT_DECRYPT",
  customerMasterKeySpec: "SYMMETRIC_DEFAULT",
  enableKeyRotation: true,
  deletionWindowInDays: 30,
});

/** The alias of the stage's key (output `personalDataKey`, for `claims export --kms-key`). */
export const personalDataKeyAliasName = `alias/${APP_NAME}-${$app.stage}-personal-data`;

/** The alias itself. */
export const personalDataKeyAlias = new aws.kms.Alias(
  "PersonalDataKmsAlias",
  { name: personalDataKeyAliasName, targetKeyId: personalDataKms.keyId },
  { deleteBeforeReplace: true },
);

/** What the functions link (`Resource.PersonalDataKey.keyId`: the key's ARN), without any permission of its own. */
export const personalDataKey = new sst.Linkable("PersonalDataKey", { properties: { keyId: personalDataKms.arn } });
