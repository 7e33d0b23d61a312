/**
 * The area of the last search in this browser tab (its drawn or uploaded shape, or its box), so
 * the cart can offer it as the area to cut the ordered files to: a scientist who searched one
 * bay by a polygon orders that bay. Kept in lib/ because two features share it: the search page
 * writes it, the cart reads it. Session storage: it ends with the tab, like the search.
 */
import type { BBox } from './api/types';
import { isGeometry, type Geometry } from './shapeParam';

const KEY = 'granary.search-area';

export interface SearchArea {
  bbox: BBox | null;
  shape: Geometry | null;
}

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** Remember the search's area; a search without one leaves the last area as it was. */
export function rememberSearchArea(area: SearchArea) {
  if (!area.bbox && !area.shape) return;
  try {
    storage()?.setItem(KEY, JSON.stringify(area));
  } catch {
    // storage full or refused: the cart then offers no search area, nothing else is lost
  }
}

/** The last search's area, or null when there was none (or what is kept is not an area). */
export function lastSearchArea(): SearchArea | null {
  const text = storage()?.getItem(KEY);
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<SearchArea>;
    const shape = isGeometry(value.shape) ? value.shape : null;
    const bbox =
      Array.isArray(value.bbox) && value.bbox.length === 4 && value.bbox.every(Number.isFinite)
        ? (value.bbox as BBox)
        : null;
    return shape || bbox ? { bbox: shape ? null : bbox, shape } : null;
  } catch {
    return null;
  }
}
