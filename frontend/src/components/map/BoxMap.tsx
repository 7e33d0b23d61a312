/**
 * The Leaflet map of the portal, loaded only when a page shows it: the world in plate carrée
 * (the projection granule boxes are given in, poles included), land outlines from Natural
 * Earth shipped with the app instead of a tile server, a 30° graticule, granule footprints,
 * and the search box with its drawing tool.
 */
import type { GeoJsonObject } from 'geojson';
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import landUrl from 'world-atlas/land-110m.json?url';

import { BoxDraw } from './boxDraw';
import { boxRectangles } from './geometry';
import type { BoxMapProps } from './types';
import './map.css';

const WORLD = L.latLngBounds([-90, -180], [90, 180]);

let land: Promise<GeoJsonObject | null> | null = null;

/** The land polygons, fetched once per page load; a map without them still works. */
function loadLand(): Promise<GeoJsonObject | null> {
  land ??= fetch(landUrl)
    .then((response) => (response.ok ? (response.json() as Promise<Topology>) : null))
    .then((topology) => {
      const object = topology?.objects.land;
      return topology && object ? (feature(topology, object) as GeoJsonObject) : null;
    })
    .catch(() => null);
  return land;
}

function graticule(): L.LayerGroup {
  const lines: L.Polyline[] = [];
  for (let lng = -180; lng <= 180; lng += 30)
    lines.push(
      L.polyline([
        [-90, lng],
        [90, lng],
      ]),
    );
  for (let lat = -60; lat <= 60; lat += 30)
    lines.push(
      L.polyline([
        [lat, -180],
        [lat, 180],
      ]),
    );
  for (const line of lines) line.setStyle({ className: 'box-map__graticule', interactive: false });
  return L.layerGroup(lines);
}

function rectangles(box: [number, number, number, number], options: L.PolylineOptions) {
  return boxRectangles(box).map((corners) => L.rectangle(corners, options));
}

export default function BoxMap({
  label,
  box,
  boxStyle = 'filled',
  onBoxChange,
  footprints = [],
  highlight = null,
  onFootprintSelect,
  focus = null,
}: BoxMapProps) {
  const containerRef = useRef<HTMLDivElement>(null);
  const mapRef = useRef<L.Map | null>(null);
  const boxLayer = useRef(L.layerGroup());
  const footprintLayer = useRef(L.layerGroup());
  const drawRef = useRef<BoxDraw | null>(null);
  const [drawing, setDrawing] = useState(false);
  // Handlers change on every render; the map keeps calling the latest ones.
  const handlers = useRef({ onBoxChange, onFootprintSelect });
  useLayoutEffect(() => {
    handlers.current = { onBoxChange, onFootprintSelect };
  });
  const focusKey = focus ? focus.join(',') : '';

  useEffect(() => {
    const container = containerRef.current;
    if (!container) return;
    const map = L.map(container, {
      crs: L.CRS.EPSG4326,
      minZoom: -1,
      maxZoom: 8,
      zoomSnap: 0.25,
      maxBounds: WORLD.pad(0.05),
      maxBoundsViscosity: 1,
      attributionControl: true,
      keyboard: true,
    });
    map.attributionControl.setPrefix(false).addAttribution('Land: Natural Earth');
    map.fitBounds(WORLD);
    graticule().addTo(map);
    const boxes = boxLayer.current;
    const footprints = footprintLayer.current;
    boxes.addTo(map);
    footprints.addTo(map);
    let live = true;
    void loadLand().then((shape) => {
      if (!live || !shape) return;
      L.geoJSON(shape, { style: { className: 'box-map__land' }, interactive: false })
        .addTo(map)
        .bringToBack();
    });
    drawRef.current = new BoxDraw(map, {
      style: { className: 'box-map__box' },
      onDone: (drawn) => {
        setDrawing(false);
        handlers.current.onBoxChange?.(drawn);
      },
    });
    const resize = new ResizeObserver(() => map.invalidateSize());
    resize.observe(container);
    mapRef.current = map;
    return () => {
      live = false;
      resize.disconnect();
      drawRef.current?.disable();
      drawRef.current = null;
      boxes.remove();
      footprints.remove();
      map.remove();
      mapRef.current = null;
    };
  }, []);

  useEffect(() => {
    const map = mapRef.current;
    if (!map) return;
    const parts = focusKey.split(',').map(Number);
    // No animation: a view still moving when the land outlines arrive would draw them askew.
    if (parts.length === 4) {
      const [west, south, east, north] = parts as [number, number, number, number];
      const bounds = west <= east ? L.latLngBounds([south, west], [north, east]).pad(0.4) : WORLD;
      const shown = L.latLngBounds(
        [Math.max(-90, bounds.getSouth()), Math.max(-180, bounds.getWest())],
        [Math.min(90, bounds.getNorth()), Math.min(180, bounds.getEast())],
      );
      map.fitBounds(shown, { maxZoom: 4, animate: false });
    } else {
      map.fitBounds(WORLD, { animate: false });
    }
  }, [focusKey]);

  useEffect(() => {
    const layer = boxLayer.current;
    layer.clearLayers();
    const className =
      boxStyle === 'outline' ? 'box-map__box box-map__box--outline' : 'box-map__box';
    if (box)
      for (const rectangle of rectangles(box, { className, interactive: false }))
        layer.addLayer(rectangle);
  }, [box, boxStyle]);

  useEffect(() => {
    const layer = footprintLayer.current;
    layer.clearLayers();
    for (const footprint of footprints) {
      const highlighted = footprint.id === highlight;
      for (const rectangle of rectangles(footprint.bbox, {
        className: highlighted
          ? 'box-map__footprint box-map__footprint--highlight'
          : 'box-map__footprint',
      })) {
        rectangle.bindTooltip(footprint.label, { sticky: true });
        rectangle.on('click', () => handlers.current.onFootprintSelect?.(footprint.id));
        layer.addLayer(rectangle);
      }
    }
  }, [footprints, highlight]);

  useEffect(() => {
    const draw = drawRef.current;
    if (!draw) return;
    if (drawing) draw.enable();
    else draw.disable();
  }, [drawing]);

  useEffect(() => {
    if (!drawing) return;
    const stop = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setDrawing(false);
    };
    document.addEventListener('keydown', stop);
    return () => document.removeEventListener('keydown', stop);
  }, [drawing]);

  return (
    <div className="box-map">
      {onBoxChange && (
        <div className="box-map__tools">
          <button
            type="button"
            className="button button--small button--quiet"
            aria-pressed={drawing}
            onClick={() => setDrawing((on) => !on)}
          >
            {drawing ? 'Drawing: drag on the map (Esc stops)' : 'Draw a box'}
          </button>
        </div>
      )}
      <div ref={containerRef} className="box-map__map" role="region" aria-label={label} />
    </div>
  );
}
