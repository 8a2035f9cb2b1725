import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: ['test/integration/node/**'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Suites share one node; files run in parallel on the machine's two cores.
          maxWorkers: 2,
        },
      },
      {
        // The node's own life cycle (start, failure, clean-up) needs its own node, and only one
        // runs per machine: run this project alone, never beside `integration`.
        test: {
          name: 'node',
          include: ['test/integration/node/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
