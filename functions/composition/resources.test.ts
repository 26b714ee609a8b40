// The link of the stage's KMS key: a function not linked to it composes no vault, a link of the wrong shape is an error.
import { describe, expect, it } from "vitest";
import { ResourceLinkError } from "./errors.ts";
import { linkedResources } from "./resources.ts";

const reader =
  (links: Record<string, unknown>) =>
  (name: string): unknown => {
    if (!(name in links)) throw new Error(`"${name}" is not linked in your sst.config.ts`);
    return links[name];
  };

describe("Resource.PersonalDataKey", () => {
  it("gives the key's id to a linked function, and nothing to one SST did not link (the timer, the authorizer)", () => {
    const arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    expect(linkedResources(reader({ PersonalDataKey: { keyId: arn } })).personalDataKeyId()).toBe(arn);
    expect(linkedResources(reader({ Table: { name: "t" } })).personalDataKeyId()).toBeUndefined();
  });

  it("refuses a link without a key id, naming it, rather than running without sealing", () => {
    const bad = linkedResources(reader({ PersonalDataKey: { arn: "x" } }));
    expect(() => bad.personalDataKeyId()).toThrow(ResourceLinkError);
    expect(() => bad.personalDataKeyId()).toThrow(/Resource\.PersonalDataKey must carry \{ keyId \}/);
  });
});
