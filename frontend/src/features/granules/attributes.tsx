import type { ReactNode } from 'react';

import { DataTable, type Column } from '../../components/DataTable';

type Row = Record<string, unknown>;

/** A list of records (e.g. a granule's variables: name, units, shape …), shown as a table. */
export function isTable(value: unknown): value is Row[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))
  );
}

/** "variables" -> "Variables", "qa_flags" -> "Qa flags". */
export function attributeTitle(name: string): string {
  const words = name.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A metadata value as people read it: numbers and text as they are, a list of numbers as a
 * shape ("180 × 360"), other lists comma-separated, a record as "key: value" pairs; never JSON.
 */
export function AttributeValue({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">none</span>;
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((item) => typeof item === 'number'))
      return value.join(' × ');
    return value.map((item, index) => (
      <span key={index}>
        {index > 0 && ', '}
        <AttributeValue value={item} />
      </span>
    ));
  }
  if (typeof value === 'object') {
    return (
      <dl className="attribute-record">
        {Object.entries(value as Row).map(([key, inner]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>
              <AttributeValue value={inner} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return String(value);
}

/** Preferred column order; other keys follow in the order the records first give them. */
const FIRST = ['name', 'long_name', 'standard_name', 'units', 'shape', 'dtype'];

/** A list of records as a table, a column per key any record has. */
export function AttributeTable({ name, rows }: { name: string; rows: Row[] }) {
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))].sort((a, b) => {
    const rank = (key: string) => (FIRST.includes(key) ? FIRST.indexOf(key) : FIRST.length);
    return rank(a) - rank(b);
  });
  const columns: Column<Row>[] = keys.map((key, index) => ({
    label: attributeTitle(key),
    rowHeader: index === 0,
    // A key some records lack leaves their cell empty.
    cell: (row) => (key in row ? <AttributeValue value={row[key]} /> : null),
  }));
  return (
    <DataTable
      columns={columns}
      rows={rows}
      rowKey={(_, index) => index}
      caption={`${attributeTitle(name)} of the granule`}
      captionHidden
    />
  );
}
