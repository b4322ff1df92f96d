// typescript-eslint's type-checked rules over all TypeScript; workflow files also follow Temporal's
// rule (as in temporalio/samples-typescript): the workflow sandbox has no Node modules, and anything
// a workflow imports is bundled into it, so workflow files import only from each other and from
// @temporalio/workflow and @temporalio/common. Types too: workflows/ declares its contract with the
// activities, which import it from there (npm run deps checks the same, with the other layers).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// The workflow sandbox provides `assert` (Temporal's samples allow it too).
const nodeBuiltins = builtinModules.filter((name) => name !== 'assert').flatMap((name) => [name, `node:${name}`]);
const escaped = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
// Everything but workflows/ itself, the workflow-safe packages and the built-ins (reported above).
const outsideWorkflows = `^(?!\\./|@temporalio/(workflow|common)$|(node:)?(${builtinModules.map(escaped).join('|')})$)`;

export default defineConfig(
  {
    ignores: ['node_modules/', '.data/', 'coverage/', 'test/fixtures/', 'app/dist/'],
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A variable a closure reads before its one assignment stays `let` (a `const` there could not be assigned).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A promise nobody awaits loses its rejection: await it, or `void` it with the reason why.
      '@typescript-eslint/no-floating-promises': 'error',
      // A leading underscore marks a value left unused on purpose, as in Temporal's samples;
      // destructuring drops fields by naming them beside a rest element.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code runs in a sandbox without Node modules.',
          })),
          patterns: [
            {
              regex: outsideWorkflows,
              message:
                'A workflow imports only from workflows/, @temporalio/workflow and @temporalio/common, types included.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests, benchmarks and the screenshot script: production code (src/, activities/, workflows/,
    // examples/ and the entry points) stays under every rule above.
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'docs/**/*.ts'],
    rules: {
      // Test doubles implement async interfaces with values at hand.
      '@typescript-eslint/require-await': 'off',
      // They read untyped JSON answers and poke at internals; their assertions check the shapes.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
);
