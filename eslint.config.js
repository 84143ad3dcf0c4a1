// Lint rules for the whole repository: typescript-eslint's recommended, type-aware where cheap.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.next/', '.data/', 'next-env.d.ts', 'test-results/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['bench/**', 'scripts/**', 'tests/**'],
    rules: { 'no-console': 'off' },
  },
);
