import { describe, expect, it } from 'vitest';

import { bucketDays, bucketLabel } from './timelineBuckets';

describe('timeline buckets as days of the search', () => {
  it('covers a single bucket of each size, both ends included', () => {
    expect(bucketDays('2026-11-01T05:00:00Z', '2026-11-01T05:00:00Z', 'hour')).toEqual({
      start: '2026-11-01',
      end: '2026-11-01',
    });
    expect(bucketDays('2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z', 'day')).toEqual({
      start: '2026-11-01',
      end: '2026-11-01',
    });
    // February of a leap year has 29 days (Gregorian calendar).
    expect(bucketDays('2024-02-01T00:00:00Z', '2024-02-01T00:00:00Z', 'month')).toEqual({
      start: '2024-02-01',
      end: '2024-02-29',
    });
    expect(bucketDays('2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 'year')).toEqual({
      start: '2025-01-01',
      end: '2025-12-31',
    });
  });

  it('spans a drag in either direction', () => {
    const span = { start: '2026-10-30', end: '2026-11-02' };
    expect(bucketDays('2026-10-30T00:00:00Z', '2026-11-02T00:00:00Z', 'day')).toEqual(span);
    expect(bucketDays('2026-11-02T00:00:00Z', '2026-10-30T00:00:00Z', 'day')).toEqual(span);
    expect(bucketDays('2026-11-01T23:00:00Z', '2026-12-01T00:00:00Z', 'month')).toEqual({
      start: '2026-11-01',
      end: '2026-12-31',
    });
  });

  it('labels a bucket as precisely as its size', () => {
    const start = '2026-11-03T07:00:00Z';
    expect(bucketLabel(start, 'hour')).toBe('2026-11-03 07:00');
    expect(bucketLabel(start, 'day')).toBe('2026-11-03');
    expect(bucketLabel(start, 'month')).toBe('2026-11');
    expect(bucketLabel(start, 'year')).toBe('2026');
  });
});
