/** One jest run over every workspace; each test file gets its own database and exchange. */
const src = (path) => `<rootDir>/${path}`;

module.exports = {
  testEnvironment: 'node',
  // Transpile only: type errors are the job of `npm run build`, which checks tests too.
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, tsconfig: { module: 'commonjs', target: 'es2022', esModuleInterop: true } }],
  },
  moduleNameMapper: {
    '^@affiliate/contracts$': src('contracts/src/index.ts'),
    '^@affiliate/platform$': src('services/platform/src/index.ts'),
    '^@affiliate/platform/testing$': src('services/platform/src/testing/index.ts'),
    '^@affiliate/client$': src('clients/typescript/src/index.ts'),
  },
  testMatch: ['<rootDir>/**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: src('services/platform/src/testing/global-setup.ts'),
  globalTeardown: src('services/platform/src/testing/global-teardown.ts'),
  testTimeout: 60_000,
  maxWorkers: 2,
};
