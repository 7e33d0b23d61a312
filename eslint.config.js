// ESLint for the web app (npm run lint): TypeScript, the rules of React hooks and of TanStack
// Query, and the house rule that one feature never imports another.
import { readdirSync } from 'node:fs';

import js from '@eslint/js';
import pluginQuery from '@tanstack/eslint-plugin-query';
import { defineConfig } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const FEATURES = 'frontend/src/features';
const features = readdirSync(FEATURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

export default defineConfig(
  { ignores: ['.venv/', 'var/', 'frontend/dist/', 'frontend/src/lib/api/schema.d.ts'] },
  {
    files: ['frontend/src/**/*.{ts,tsx}'],
    extends: [
      js.configs.recommended,
      tseslint.configs.recommended,
      reactHooks.configs.flat.recommended,
      pluginQuery.configs['flat/recommended'],
    ],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js'] })],
    },
    rules: {
      // What two features share lives in components/ or lib/ (the API in lib/api/), never in either.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: features.map((feature) => ({
            target: `./${FEATURES}/${feature}`,
            from: `./${FEATURES}`,
            except: [`./${feature}`],
            message:
              'A feature does not import another: move what both use to components/ or lib/.',
          })),
        },
      ],
      'import-x/no-duplicates': 'error',
      'import-x/no-cycle': 'error',
    },
  },
);
