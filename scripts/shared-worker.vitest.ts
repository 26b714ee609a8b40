// Setup of every file of the slow-shared project (vitest.config.ts), whose workers run file after file without
// isolation: the file ends with the environment variables it started with. The tests' own changes go through
// vi.stubEnv (undone by unstubEnvs) or are kept out of the project (scripts/test-tiers.ts), but the code under test
// writes some too: the local stack links its queues and tables for sst's Resource through SST_RESOURCE_* variables
// (local/resources.ts setSstResourceEnv), which the next file of the worker would otherwise inherit.
import { afterAll } from "vitest";

const started = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in started)) delete process.env[name];
  Object.assign(process.env, started);
});
