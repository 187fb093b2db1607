import js from '@eslint/js';
import globals from 'globals';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.local-infra/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      'no-restricted-syntax': [
        'error',
        {
          // DESIGN.md section 8: the local server may return another caller's later state here.
          // Every way of asking for the post-image: a value that is not literally the pre-image's
          // ('after', 'after' as const, a variable, ReturnDocument.AFTER, returnOriginal: false, new: true).
          selector: [
            "Property:matches([key.name='returnDocument'], [key.value='returnDocument']):not([value.value='before'])",
            "Property:matches([key.name='returnOriginal'], [key.value='returnOriginal']):not([value.value=true])",
            "Property:matches([key.name='new'], [key.value='new']):not([value.value=false])",
            "MemberExpression[object.name='ReturnDocument'][property.name='AFTER']",
          ].join(', '),
          message:
            'Do not take a decision or an identity from the document findOneAndUpdate returns after the change: use updateOne and read by _id, or the pre-image (see services/platform/test/database-guarantees.test.ts).',
        },
      ],
    },
  },
  {
    // SECURITY.md, scoped keys: a router matches paths in their exact case, so no case variant of a path
    // reaches an operation the gateway judged as another (createRouter in services/platform).
    files: ['services/*/src/**/*.ts', 'gateway/src/**/*.ts'],
    ignores: ['services/platform/src/http/app.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'express',
              importNames: ['Router'],
              allowTypeImports: true,
              message: 'Use createRouter from @affiliate/platform: it matches paths case-sensitively.',
            },
          ],
        },
      ],
    },
  },
  {
    // The console runs in the browser.
    files: ['console/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The tracking script runs in shops' pages, as a classic script: plain ES2017, where a warning in the console is how it reports.
    files: ['gateway/tracker/**'],
    languageOptions: { ecmaVersion: 2017, sourceType: 'script', globals: { ...globals.browser } },
    rules: { 'no-console': ['error', { allow: ['warn'] }] },
  },
  {
    files: ['**/test/**/*.ts', 'scripts/**', 'bench/**', '**/*.config.js'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  // Layout is Prettier's (npm run format); the rules that would fight it are off.
  prettier,
);
