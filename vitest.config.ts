import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One test file per core (vitest's default leaves one core idle: a single file at a time on 2 cores);
    // most files spend their time waiting on sockets, timers, leases and child processes.
    maxWorkers: availableParallelism(),
  },
});
