#!/usr/bin/env node
// Entry point of the `claims` CLI: registers the TypeScript loader, then runs cli/main.ts.
// Local runs are on Node 20 on purpose (Lambda runs nodejs22.x): the AWS SDK's notice about its own
// future Node 22 requirement is not news to the user of a local command, so it is silenced here.
globalThis.process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
globalThis.process.env.AWS_EC2_METADATA_DISABLED ??= "true";
const { register } = await import("tsx/esm/api");
register();
await import("../cli/main.ts");
