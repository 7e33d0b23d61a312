/**
 * Drawing a box on a Leaflet map by dragging, with mouse, pen or finger. Pointer events on the
 * map's container (captured, so a drag that leaves the map still ends), the map's own dragging
 * switched off meanwhile. The keyboard way to give a box is the search form's edge fields.
 */
import L from 'leaflet';

import type { BBox } from '../../lib/api/types';
import { boxFromCorners, isTooSmall } from './geometry';

export interface BoxDrawOptions {
  style: L.PathOptions;
  /** Called with the finished box; a click without a drag draws nothing. */
  onDone: (box: BBox) => void;
}

export class BoxDraw {
  private readonly map: L.Map;
  private readonly options: BoxDrawOptions;
  private start: L.LatLng | null = null;
  private pointerId: number | null = null;
  private preview: L.Rectangle | null = null;
  private active = false;

  constructor(map: L.Map, options: BoxDrawOptions) {
    this.map = map;
    this.options = options;
  }

  get enabled(): boolean {
    return this.active;
  }

  enable(): void {
    if (this.active) return;
    this.active = true;
    const container = this.map.getContainer();
    container.classList.add('box-map--drawing');
    this.map.dragging.disable();
    container.addEventListener('pointerdown', this.onDown);
    container.addEventListener('pointermove', this.onMove);
    container.addEventListener('pointerup', this.onUp);
    container.addEventListener('pointercancel', this.onCancel);
  }

  disable(): void {
    if (!this.active) return;
    this.active = false;
    const container = this.map.getContainer();
    container.classList.remove('box-map--drawing');
    container.removeEventListener('pointerdown', this.onDown);
    container.removeEventListener('pointermove', this.onMove);
    container.removeEventListener('pointerup', this.onUp);
    container.removeEventListener('pointercancel', this.onCancel);
    this.map.dragging.enable();
    this.reset();
  }

  private reset(): void {
    this.preview?.remove();
    this.preview = null;
    this.start = null;
    this.pointerId = null;
  }

  private latLng(event: PointerEvent): L.LatLng {
    return this.map.mouseEventToLatLng(event);
  }

  private readonly onDown = (event: PointerEvent) => {
    // Leave the zoom buttons and the attribution clickable.
    if ((event.target as HTMLElement).closest('.leaflet-control')) return;
    if (event.button !== 0) return;
    event.preventDefault();
    this.start = this.latLng(event);
    this.pointerId = event.pointerId;
    this.map.getContainer().setPointerCapture?.(event.pointerId);
  };

  private readonly onMove = (event: PointerEvent) => {
    if (!this.start || event.pointerId !== this.pointerId) return;
    const [west, south, east, north] = boxFromCorners(this.start, this.latLng(event));
    const bounds = L.latLngBounds([south, west], [north, east]);
    if (this.preview) this.preview.setBounds(bounds);
    else
      this.preview = L.rectangle(bounds, { ...this.options.style, interactive: false }).addTo(
        this.map,
      );
  };

  private readonly onUp = (event: PointerEvent) => {
    if (!this.start || event.pointerId !== this.pointerId) return;
    const box = boxFromCorners(this.start, this.latLng(event));
    this.reset();
    if (!isTooSmall(box)) this.options.onDone(box);
  };

  private readonly onCancel = () => this.reset();
}
