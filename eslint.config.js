// The linter's rules: ESLint's and typescript-eslint's recommended sets, and the type-aware checks for promises
// that nobody awaits or that go where a callback's result is ignored. Layout is prettier's (.prettierrc.json).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'test-results/', '.benchmarks/', 'test/*/data/', 'test/*/golden/'] },
  js.configs.recommended,
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      // Test titles stay whole (prettier keeps them on the call's line, and a title is searched for as one string).
      '@stylistic/max-len': [
        'error',
        { code: 120, ignorePattern: String.raw`^\s*(it|test|describe)(\.\w+)*\(['"\x60]` },
      ],
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Log text, header values and terminal output are checked for control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['src/ui/assets/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
  {
    files: ['bin/**/*.js', 'examples/**/*.{js,mjs,cjs}', '*.config.{js,mjs,cjs}', '.dependency-cruiser.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['examples/recipes/jest-*/**/*.test.{js,cjs,mjs}'],
    languageOptions: { globals: globals.jest },
  },
);
