import { formatBytes } from '../lib/format';
import type { Column } from './DataTable';
import './portal.css';

/** A file's size in a table: readable, with the exact byte count for screen readers. */
export function sizeColumn<T>(bytes: (row: T) => number): Column<T> {
  return {
    label: 'Size',
    numeric: true,
    cell: (row) => (
      <>
        {formatBytes(bytes(row))}
        <span className="visually-hidden"> ({bytes(row)} bytes)</span>
      </>
    ),
  };
}

/** A file's checksum in a table, whole, so it can be compared with what was received. */
export function checksumColumn<T>(
  checksum: (row: T) => { type: string; value: string; fileId: number },
): Column<T> {
  return {
    label: 'Checksum',
    cell: (row) => {
      const { type, value, fileId } = checksum(row);
      return (
        <span className="checksum">
          <span className="muted small">{type}</span>{' '}
          <span className="mono wrap" data-checksum={fileId}>
            {value}
          </span>
        </span>
      );
    },
  };
}
