/** One jest run over every workspace; each test file gets its own database and exchange. */
const src = (path) => `<rootDir>/${path}`;

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  moduleNameMapper: {
    '^@affiliate/contracts$': src('contracts/src/index.ts'),
    '^@affiliate/platform$': src('services/platform/src/index.ts'),
    '^@affiliate/platform/testing$': src('services/platform/src/testing/index.ts'),
  },
  testMatch: ['<rootDir>/**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: src('services/platform/src/testing/global-setup.ts'),
  globalTeardown: src('services/platform/src/testing/global-teardown.ts'),
  testTimeout: 60_000,
  maxWorkers: 2,
};
