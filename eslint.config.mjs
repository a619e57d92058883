// ESLint (typescript-eslint's recommended rules) over the code: `npm run lint:code`, part of `npm test`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'clients/typescript/src/generated/**',
      'clients/typescript/dist/**',
      'node_modules/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a parameter or binding kept for its position (express's 4-argument error handler).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Input sanitising matches control characters on purpose (NUL, C0 controls in text and keys).
      'no-control-regex': 'off',
      // A hyphen escaped inside a character class stays literal when the class is extended.
      'no-useless-escape': 'off',
    },
  },
  {
    // The contract documents (openapi.yaml, asyncapi.yaml) are read as plain JSON where their shape is
    // checked at start; tests and scripts read JSON answers and fixtures the same way.
    files: ['src/contract/**', 'src/http/**', 'src/mock/**', 'test/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-regex-spaces': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
