import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';

import { server } from '../../test/server';
import { ApiError, apiFetch, cursorOf } from './client';

describe('apiFetch', () => {
  it('sends the CSRF token on unsafe methods only', async () => {
    document.cookie = 'csrftoken=token-123; path=/';
    const seen: Record<string, string | null> = {};
    server.use(
      http.get('/api/v1/thing/', ({ request }) => {
        seen.get = request.headers.get('X-CSRFToken');
        return HttpResponse.json({ ok: true });
      }),
      http.post('/api/v1/thing/', async ({ request }) => {
        seen.post = request.headers.get('X-CSRFToken');
        seen.body = JSON.stringify(await request.json());
        return new HttpResponse(null, { status: 204 });
      }),
    );

    await expect(apiFetch('/api/v1/thing/')).resolves.toEqual({ ok: true });
    await expect(
      apiFetch('/api/v1/thing/', { method: 'POST', json: { a: 1 } }),
    ).resolves.toBeUndefined();
    expect(seen).toEqual({ get: null, post: 'token-123', body: '{"a":1}' });
  });

  it('drops empty query parameters', async () => {
    let search = '';
    server.use(
      http.get('/api/v1/thing/', ({ request }) => {
        search = new URL(request.url).search;
        return HttpResponse.json({});
      }),
    );

    await apiFetch('/api/v1/thing/', { params: { q: '', cursor: null, limit: 10 } });
    expect(search).toBe('?limit=10');
  });

  it('throws ApiError with the status, detail and field errors', async () => {
    server.use(
      http.get('/api/v1/thing/', () =>
        HttpResponse.json(
          { detail: 'bbox: bbox south (10) is north of its north (5)', errors: { bbox: ['x'] } },
          { status: 400 },
        ),
      ),
    );

    const error = await apiFetch('/api/v1/thing/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      message: 'bbox: bbox south (10) is north of its north (5)',
      errors: { bbox: ['x'] },
    });
  });

  it('turns a network failure into ApiError with status 0', async () => {
    server.use(http.get('/api/v1/thing/', () => HttpResponse.error()));

    await expect(apiFetch('/api/v1/thing/')).rejects.toMatchObject({
      status: 0,
      message: expect.stringContaining('Could not reach'),
    });
  });
});

describe('cursorOf', () => {
  it('reads the cursor of an API link', () => {
    expect(cursorOf('http://testserver/api/v1/collections/?cursor=cD0x&q=a')).toBe('cD0x');
    expect(cursorOf('http://testserver/api/v1/collections/')).toBeNull();
    expect(cursorOf(null)).toBeNull();
  });
});
