// Type-aware lint for the service: the rules CONVENTIONS.md names, on top of typescript-eslint's recommended set.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'src/generated/**', 'test/openapi/client/generated/**', 'console/src/api/schema.d.ts', 'bench/**', 'coverage/**', '**/*.mjs', '**/*.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Nest and class-validator classes are often used only through decorators and metadata.
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  // Dependencies run one way (docs/architecture.md): common/ and the execution kit below every feature
  // name no feature; they take what they need from whoever uses them.
  {
    files: ['src/common/**/*.ts', 'src/execution/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: String.raw`^(\.\./)+(tenants|projects|workspace|tools|skills|calls|audit|mcp|sandbox|rate-limit|health|shutdown|http|metrics)/`,
              message: 'common/ and the execution kit may not import a feature: take it as a parameter or move the type down.',
            },
            {
              regex: String.raw`^(\.\./)+(app\.module|app-worker)`,
              message: 'common/ and the execution kit may not import the app that assembles them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      // Tests poke at response bodies whose shape the test itself asserts.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
);
