import { describe, expect, it } from 'vitest';

import { bodyOf, copyTargets, describeSeconds, emptyForm, splitSeconds } from './collectionForm';

describe('durations', () => {
  it('shows seconds in the largest unit that divides them', () => {
    expect(splitSeconds(300, 'hours')).toEqual(['5', 'minutes']);
    expect(splitSeconds(86400 * 2, 'hours')).toEqual(['2', 'days']);
    expect(splitSeconds(90, 'hours')).toEqual(['90', 'seconds']);
    expect(splitSeconds(null, 'hours')).toEqual(['', 'hours']);
    expect(describeSeconds(3600)).toBe('1 hour');
    expect(describeSeconds(null)).toBe('—');
  });
});

describe('the body sent', () => {
  it('turns lines, lists and units into the API’s shapes', () => {
    const body = bodyOf({
      ...emptyForm(),
      short_name: ' SST ',
      file_patterns: '^(?P<granule>a)$\n\n{"regex": "^(?P<granule>b)$", "required": false}',
      variables: 'sst | K | sea surface temperature',
      approved_users: 'ann, bob ,',
      cadence: '1.5',
      cadence_unit: 'hours',
      extent_west: '-10',
      extent_start: '2024-01-01T00:00',
      copies: ['primary', 'backup'],
    });
    expect(body).toMatchObject({
      short_name: 'SST',
      file_patterns: ['^(?P<granule>a)$', { regex: '^(?P<granule>b)$', required: false }],
      variables: [{ name: 'sst', units: 'K', long_name: 'sea surface temperature' }],
      approved_users: ['ann', 'bob'],
      cadence_seconds: 5400,
      latency_target_seconds: null,
      extent_west: -10,
      extent_south: null,
      extent_start: '2024-01-01T00:00:00Z',
      policy: { copies: ['primary', 'backup'], cache_residency_days: 0 },
    });
  });

  it('sends what is not a number as typed, for the API to name', () => {
    expect(bodyOf({ ...emptyForm(), extent_north: 'north' }).extent_north).toBe('north');
  });
});

describe('copy targets', () => {
  it('offers volume groups and buckets, each labelled by its medium', () => {
    const group = { volumes: 1, capacity_bytes: 0, used_bytes: 0, live_bytes: 0, percent_full: 0 };
    const targets = copyTargets(
      [
        { ...group, name: 'primary', role: 'primary', silo: 'silo1' },
        { ...group, name: 'deep', role: 'backup', silo: null },
      ],
      [
        {
          name: 'archive-s3',
          medium: 'object',
          store: 'default',
          bucket: 'granary-archive',
          prefix: 'granary/',
          created_at: '2026-11-01T00:00:00Z',
        },
      ],
    );
    expect(targets).toEqual([
      { name: 'primary', medium: 'tape', label: 'tape: primary (silo1)' },
      { name: 'deep', medium: 'tape', label: 'tape: deep (backup)' },
      { name: 'archive-s3', medium: 'object', label: 'object store: archive-s3' },
    ]);
  });
});
