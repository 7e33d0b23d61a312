import type { BBox } from '../../lib/api/types';

/** A granule's footprint on the map. */
export interface Footprint {
  id: number;
  bbox: BBox;
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
  footprints?: Footprint[];
  /** A footprint to stand out (the result row under the pointer). */
  highlight?: number | null;
  onFootprintSelect?: (id: number) => void;
  /** Zoom to this box instead of showing the whole world. */
  focus?: BBox | null;
}
