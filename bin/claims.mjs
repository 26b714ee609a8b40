#!/usr/bin/env node
// Entry point of the `claims` CLI: runs the compiled CLI in dist/ (scripts/build-cli.mjs; `npm install` builds it).
// A build older than its sources is rebuilt first (esbuild, a dev dependency); without esbuild the CLI runs from
// its TypeScript sources through tsx, slower to start, and says so.
// Local runs are on Node 20 on purpose (Lambda runs nodejs22.x): the AWS SDK's notice about its own
// future Node 22 requirement is not news to the user of a local command, so it is silenced here.
import process from "node:process";
import { pathToFileURL } from "node:url";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
process.env.AWS_EC2_METADATA_DISABLED ??= "true";
if (process.env.CLAIMS_DEBUG) process.setSourceMapsEnabled(true);
const { buildCli, entryOf, staleReason } = await import("../scripts/build-cli.mjs");
const stale = staleReason();
let compiled = stale === undefined;
if (!compiled) {
  try {
    await import("esbuild");
    process.stderr.write(`claims: compiling the CLI first (${stale})…\n`);
    await buildCli();
    compiled = true;
  } catch (error) {
    const missing = error?.code === "ERR_MODULE_NOT_FOUND";
    process.stderr.write(
      `claims: ${missing ? "cannot compile the CLI (esbuild is not installed)" : `compiling the CLI failed: ${error?.message ?? error}`}; running from the TypeScript sources instead (slower to start; \`npm install\` builds it)\n`,
    );
  }
}
if (compiled) await import(pathToFileURL(entryOf()).href);
else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../cli/main.ts");
}
