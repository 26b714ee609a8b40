// Three projects (docs/testing.md): `quick` — units and contracts, no browser, stack, emulator, SST, bundler or
// child process (scripts/test-tiers.ts tells them apart from each file's imports), `npm run test:quick`; and the
// rest: `slow-shared` where the file and its test support leave process.env, the directory and the module registry
// alone, `slow` (a process per file) for the others. `npm test` runs all three. Workers: one per core and one more
// (vitest's default leaves one core idle; the e2e files wait on child processes and emulators about half their time,
// and on a quiet 2-core machine a third worker took the whole run from 493–529 s to 426 s, docs/testing.md);
// CLAIMS_TEST_WORKERS overrides.
import { availableParallelism } from "node:os";
import { relative } from "node:path";
import { BaseSequencer } from "vitest/node";
import type { TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";
import { committedDurations, startOrder } from "./scripts/test-order.ts";
import { ownProcessBecause, slowBecause, testFiles } from "./scripts/test-tiers.ts";

const exclude = ["node_modules/**", ".sst/**", ".claims/**", "dist/**"];
const files = testFiles();
const quick = files.filter((f) => slowBecause(f) === undefined);
const slowShared = files.filter((f) => !quick.includes(f) && ownProcessBecause(f) === undefined);
const slow = files.filter((f) => !quick.includes(f) && !slowShared.includes(f));
const workers = Number(process.env.CLAIMS_TEST_WORKERS) || Math.max(2, availableParallelism()) + 1;

/**
 * The longest files first (scripts/test-order.ts), timed by vitest's results cache where it has them, else by the
 * committed scripts/test-durations.json: a fresh clone starts its long files first as a warm checkout does.
 */
class LongestFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const committed = committedDurations();
    const root = this.ctx.config.root;
    const timed = specs.map((spec) => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
      const project = spec.project.name;
      return {
        spec,
        path,
        quick: project === "quick",
        shared: project === "slow-shared",
        ms: cached ?? committed.get(path),
      };
    });
    return startOrder(timed).map((f) => f.spec);
  }
}

export default defineConfig({
  test: {
    exclude,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: workers,
    sequence: { sequencer: LongestFirst },
    projects: [
      // `quick` shares each worker's module registry between files (isolate: false): half its CPU is importing, and
      // scripts/test-tiers.ts keeps out every file that changes process.env or mocks modules.
      {
        extends: true,
        test: { name: "quick", include: quick, isolate: false, unstubEnvs: true, unstubGlobals: true },
      },
      // The tests that run bin/claims.mjs as a user does get the compiled CLI built once, before them.
      { extends: true, test: { name: "slow", include: slow, globalSetup: ["./scripts/build-cli.vitest.ts"] } },
      // The slow files that start a stack, an emulator, a browser or a child process but leave the process's
      // environment, directory and modules alone share each worker's imports (the SDK, zod, the handlers) as the
      // quick tier does; each file still stops what it started.
      {
        extends: true,
        test: {
          name: "slow-shared",
          include: slowShared,
          isolate: false,
          unstubEnvs: true,
          unstubGlobals: true,
          // Each file ends with the environment it started with, whatever the code it ran wrote there.
          setupFiles: ["./scripts/shared-worker.vitest.ts"],
          globalSetup: ["./scripts/build-cli.vitest.ts"],
        },
      },
    ],
  },
});
