import type { Geometry } from 'geojson';
import type { ReactNode } from 'react';

import type { BBox } from '../../lib/api/types';

/** A granule's footprint on the map. */
export interface Footprint {
  id: number;
  bbox: BBox;
  /** Its outline as GeoJSON (split at the antimeridian); the box is drawn when it has none. */
  footprint?: Geometry | null;
  /** Shown as the footprint's tooltip, e.g. the granule id. */
  label: string;
}

export interface BoxMapProps {
  /** The map's accessible name: what it shows. */
  label: string;
  /** The search box, drawn dashed; null for none. */
  box: BBox | null;
  /**
   * `outline` draws the box as a line only: an extent that covers the world must not paint the
   * whole map one colour. Default `filled` (a search box, lightly shaded).
   */
  boxStyle?: 'filled' | 'outline';
  /** Offer "Draw a box" and report each drawn box. */
  onBoxChange?: (box: BBox) => void;
  /** The search shape (a drawn polygon or point, or an uploaded outline); null for none. */
  shape?: Geometry | null;
  /** Offer "Draw a polygon" and "Place a point" and report each finished shape. */
  onShapeChange?: (shape: Geometry) => void;
  /** More controls for the tool row (e.g. uploading a shape). */
  tools?: ReactNode;
  footprints?: Footprint[];
  /** A footprint to stand out (the result row under the pointer). */
  highlight?: number | null;
  onFootprintSelect?: (id: number) => void;
  /** Zoom to this box instead of showing the whole world. */
  focus?: BBox | null;
}
