import { apiFetch } from '../client';
import type { ShapeReading } from '../types';

/**
 * POST /api/v1/shapes/: the search shape of an uploaded GeoJSON, KML/KMZ or zipped shapefile,
 * simplified (with a note) when it has more vertices than a search takes. Nothing is kept.
 */
export function readShape(file: File) {
  const form = new FormData();
  form.append('file', file);
  return apiFetch<ShapeReading>('/api/v1/shapes/', { method: 'POST', body: form });
}
