/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Django serves dist/index.html at every non-API path and the assets under /static/,
// so only the production build needs the /static/ base; the dev server stays at /.
export default defineConfig(({ command }) => ({
  root: 'frontend',
  base: command === 'build' ? '/static/' : '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No source maps: they would triple what collectstatic copies and serves publicly.
    sourcemap: false,
  },
  server: {
    // `npm run dev` talks to a local `manage.py runserver` for the API and the admin login.
    proxy: {
      '/api': 'http://127.0.0.1:8000',
      '/admin': 'http://127.0.0.1:8000',
      '/static/admin': 'http://127.0.0.1:8000',
    },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    restoreMocks: true,
    testTimeout: 15_000,
  },
}));
