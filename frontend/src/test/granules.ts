import type { Granule } from '../lib/api/types';

/** A granule as the list API answers it; tests override what they are about. */
export function granule(overrides: Partial<Granule> = {}): Granule {
  const id = overrides.id ?? 1;
  const granuleId = overrides.granule_id ?? `MOD021KM.A2026305.${String(id).padStart(4, '0')}.061`;
  return {
    id,
    collection: 'MOD021KM.061',
    granule_id: granuleId,
    version: 1,
    state: 'archived',
    temporal_start: '2026-11-01T00:05:00Z',
    temporal_end: '2026-11-01T00:10:00Z',
    bbox: [-10, 20, 15, 40],
    footprint: null,
    attributes: { day_night: 'Day', cloud_cover: 12 },
    total_size: 1_234_567,
    residency: 'cache',
    files: [
      {
        id: id * 10,
        name: `${granuleId}.hdf`,
        role: 'data',
        size: 1_228_567,
        checksum_type: 'MD5',
        checksum: 'd41d8cd98f00b204e9800998ecf8427e',
      },
      {
        id: id * 10 + 1,
        name: `${granuleId}.hdf.met`,
        role: 'metadata',
        size: 6000,
        checksum_type: 'MD5',
        checksum: '9e107d9d372bb6826bd81d3542a419d6',
      },
    ],
    replaces: null,
    created_at: '2026-11-02T10:00:00Z',
    archived_at: '2026-11-02T10:01:00Z',
    browse_url: null,
    ...overrides,
  };
}
