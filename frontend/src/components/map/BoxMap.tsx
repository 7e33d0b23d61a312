/**
 * The Leaflet map of the portal, loaded only when a page shows it: the world in plate carrée
 * (the projection granule boxes are given in, poles included), land outlines from Natural
 * Earth shipped with the app instead of a tile server, a 30° graticule, granule footprints as
 * their outlines, and the search box or shape with the tools that draw them.
 */
import type { Feature, FeatureCollection, Geometry } from 'geojson';
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import landUrl from 'world-atlas/land-110m.json?url';

import { BoxDraw } from './boxDraw';
import { drawFootprints, drawSearchArea, geometryLayer } from './layers';
import { ShapeDraw } from './shapeDraw';
import type { BoxMapProps } from './types';
import './map.css';

const WORLD = L.latLngBounds([-90, -180], [90, 180]);

type Tool = 'box' | 'polygon' | 'point' | null;

const HINTS: Record<NonNullable<Tool>, string> = {
  box: 'Drag on the map to draw a box (Esc stops).',
  polygon:
    'Click each corner; double-click, click the first corner or press Enter to finish (Esc stops). Edges take the shorter way round, so one from 170° to -170° crosses the antimeridian.',
  point: 'Click a place on the map (Esc stops).',
};

let land: Promise<Geometry[]> | null = null;

/** The land polygons, fetched once per page load; a map without them still works. */
function loadLand(): Promise<Geometry[]> {
  land ??= fetch(landUrl)
    .then((response) => (response.ok ? (response.json() as Promise<Topology>) : null))
    .then((topology) => {
      const object = topology?.objects.land;
      if (!topology || !object) return [];
      const found = feature(topology, object) as Feature | FeatureCollection;
      const features = found.type === 'FeatureCollection' ? found.features : [found];
      return features.map((f) => f.geometry);
    })
    .catch(() => []);
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

/** The view's edges on the container (data-view="west,south,east,north"), for scripts. */
function markView(map: L.Map) {
  const b = map.getBounds();
  map.getContainer().dataset.view = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()]
    .map((v) => v.toFixed(4))
    .join(',');
}

interface Tools {
  box: BoxDraw;
  shape: ShapeDraw;
}

/** The Leaflet map in `containerRef`, its layers and drawing tools, for the map's lifetime. */
function useLeaflet(
  containerRef: React.RefObject<HTMLDivElement | null>,
  handlers: React.RefObject<Pick<BoxMapProps, 'onBoxChange' | 'onShapeChange'>>,
  setTool: (tool: Tool) => void,
  setVertices: (count: number) => void,
) {
  const mapRef = useRef<L.Map | null>(null);
  const areaLayer = useRef(L.layerGroup());
  const footprintLayer = useRef(L.layerGroup());
  const toolsRef = useRef<Tools | null>(null);
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
    map.on('moveend zoomend resize', () => markView(map));
    map.fitBounds(WORLD);
    graticule().addTo(map);
    const area = areaLayer.current;
    const footprints = footprintLayer.current;
    footprints.addTo(map);
    area.addTo(map);
    let live = true;
    void loadLand().then((shapes) => {
      if (!live) return;
      // Drawn like a search shape: land cut at 180° shows whole at both edges of the map.
      for (const shape of shapes)
        geometryLayer(shape, 'box-map__land', false, 'land').addTo(map).bringToBack();
    });
    toolsRef.current = {
      box: new BoxDraw(map, {
        style: { className: 'box-map__box' },
        onDone: (drawn) => {
          setTool(null);
          handlers.current.onBoxChange?.(drawn);
        },
      }),
      shape: new ShapeDraw(map, {
        style: { className: 'box-map__box box-map__box--drawing' },
        onDone: (drawn) => {
          setTool(null);
          handlers.current.onShapeChange?.(drawn);
        },
        onProgress: setVertices,
      }),
    };
    // No animation on a resize, and none left running at unmount: a pan still moving when the
    // page changed read the removed pane ("reading '_leaflet_pos'", an uncaught error).
    const resize = new ResizeObserver(() => map.invalidateSize({ animate: false }));
    resize.observe(container);
    mapRef.current = map;
    return () => {
      live = false;
      resize.disconnect();
      toolsRef.current?.box.disable();
      toolsRef.current?.shape.disable();
      toolsRef.current = null;
      area.remove();
      footprints.remove();
      map.stop();
      map.remove();
      mapRef.current = null;
    };
  }, [containerRef, handlers, setTool, setVertices]);
  return { mapRef, areaLayer, footprintLayer, toolsRef };
}

function useFocus(map: React.RefObject<L.Map | null>, focusKey: string) {
  useEffect(() => {
    const current = map.current;
    if (!current) return;
    const parts = focusKey.split(',').map(Number);
    // No animation: a view still moving when the land outlines arrive would draw them askew.
    if (parts.length === 4) {
      const [west, south, east, north] = parts as [number, number, number, number];
      const bounds = west <= east ? L.latLngBounds([south, west], [north, east]).pad(0.4) : WORLD;
      const shown = L.latLngBounds(
        [Math.max(-90, bounds.getSouth()), Math.max(-180, bounds.getWest())],
        [Math.min(90, bounds.getNorth()), Math.min(180, bounds.getEast())],
      );
      current.fitBounds(shown, { maxZoom: 4, animate: false });
    } else {
      current.fitBounds(WORLD, { animate: false });
    }
  }, [map, focusKey]);
}

export default function BoxMap({
  label,
  box,
  boxStyle = 'filled',
  onBoxChange,
  shape = null,
  onShapeChange,
  tools,
  footprints = [],
  highlight = null,
  onFootprintSelect,
  focus = null,
}: BoxMapProps) {
  const containerRef = useRef<HTMLDivElement>(null);
  const [tool, setTool] = useState<Tool>(null);
  const [vertices, setVertices] = useState(0);
  // Handlers change on every render; the map keeps calling the latest ones.
  const handlers = useRef({ onBoxChange, onShapeChange, onFootprintSelect });
  useLayoutEffect(() => {
    handlers.current = { onBoxChange, onShapeChange, onFootprintSelect };
  });
  const { mapRef, areaLayer, footprintLayer, toolsRef } = useLeaflet(
    containerRef,
    handlers,
    setTool,
    setVertices,
  );
  useFocus(mapRef, focus ? focus.join(',') : '');

  useEffect(() => {
    drawSearchArea(areaLayer.current, box, shape, boxStyle === 'outline');
  }, [areaLayer, box, shape, boxStyle]);

  useEffect(() => {
    drawFootprints(footprintLayer.current, footprints, highlight, (id) =>
      handlers.current.onFootprintSelect?.(id),
    );
  }, [footprintLayer, footprints, highlight]);

  useEffect(() => {
    const current = toolsRef.current;
    if (!current) return;
    setVertices(0);
    if (tool === 'box') current.box.enable();
    else current.box.disable();
    if (tool === 'polygon' || tool === 'point') current.shape.enable(tool);
    else current.shape.disable();
  }, [toolsRef, tool]);

  useEffect(() => {
    if (!tool) return;
    const key = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setTool(null);
      if (event.key === 'Enter' && tool === 'polygon') toolsRef.current?.shape.finish();
    };
    document.addEventListener('keydown', key);
    return () => document.removeEventListener('keydown', key);
  }, [toolsRef, tool]);

  const toggle = (which: NonNullable<Tool>) => setTool((on) => (on === which ? null : which));
  return (
    <div className="box-map">
      {(onBoxChange || onShapeChange || tools) && (
        <div className="box-map__tools" role="toolbar" aria-label="Area tools">
          {onBoxChange && (
            <ToolButton tool="box" active={tool} onClick={toggle}>
              Draw a box
            </ToolButton>
          )}
          {onShapeChange && (
            <>
              <ToolButton tool="polygon" active={tool} onClick={toggle}>
                Draw a polygon
              </ToolButton>
              <ToolButton tool="point" active={tool} onClick={toggle}>
                Place a point
              </ToolButton>
            </>
          )}
          {tool === 'polygon' && (
            <button
              type="button"
              className="button button--small"
              disabled={vertices < 3}
              onClick={() => toolsRef.current?.shape.finish()}
            >
              Finish polygon
            </button>
          )}
          {tools}
        </div>
      )}
      {tool && (
        <p className="hint box-map__hint" role="status">
          {HINTS[tool]}
        </p>
      )}
      <div ref={containerRef} className="box-map__map" role="region" aria-label={label} />
    </div>
  );
}

function ToolButton({
  tool,
  active,
  onClick,
  children,
}: {
  tool: NonNullable<Tool>;
  active: Tool;
  onClick: (tool: NonNullable<Tool>) => void;
  children: string;
}) {
  return (
    <button
      type="button"
      className="button button--small button--quiet"
      aria-pressed={active === tool}
      onClick={() => onClick(tool)}
    >
      {children}
    </button>
  );
}
