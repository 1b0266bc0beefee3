import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One test file at a time: many suites spawn redis-server clusters, tollgate processes and
    // load loops, and on a 2-core machine running them side by side only makes their real-time
    // checks noisy. The whole suite still runs in a few minutes.
    fileParallelism: false,
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
