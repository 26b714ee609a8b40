import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", ".sst/**", ".claims/**", "dist/**"],
    globalSetup: ["./scripts/build-cli.vitest.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
