import { formatBytes } from '../lib/format';
import './portal.css';

/** A file's size in a table: readable, with the exact byte count for screen readers. */
export function SizeCell({ bytes }: { bytes: number }) {
  return (
    <td data-label="Size" className="numeric">
      {formatBytes(bytes)}
      <span className="visually-hidden"> ({bytes} bytes)</span>
    </td>
  );
}

/** A file's checksum in a table, whole, so it can be compared with what was received. */
export function ChecksumCell({ type, value, fileId }: { type: string; value: string; fileId: number }) {
  return (
    <td data-label="Checksum">
      <span className="checksum">
        <span className="muted small">{type}</span>{' '}
        <span className="mono wrap" data-checksum={fileId}>
          {value}
        </span>
      </span>
    </td>
  );
}
