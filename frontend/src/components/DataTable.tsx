import type { HTMLAttributes, Key, ReactNode } from 'react';

/** One column: its header, what each row shows in it, and how it is laid out. */
export interface Column<T> {
  /** The header's words; also the label a card shows on narrow screens, and the column's key. */
  label: string;
  /** What the header shows instead of `label`; `hidden` keeps it for screen readers only. */
  header?: ReactNode | 'hidden';
  cell: (row: T, index: number) => ReactNode;
  /** Right-aligned figures, header and cells alike. */
  numeric?: boolean;
  /** Extra classes on the cells (not the header), e.g. 'mono wrap'. */
  className?: string;
  /** The cell that names the row (a row header, `<th scope="row">`). */
  rowHeader?: boolean;
}

type RowProps = HTMLAttributes<HTMLTableRowElement> & { [data: `data-${string}`]: string };

/** Check boxes in a first column; `onToggleAll` adds "Select all shown" in its header. */
export interface Selection<T> {
  isSelected: (row: T) => boolean;
  onToggle: (row: T) => void;
  onToggleAll?: (all: boolean) => void;
  /** The accessible name of a row's check box, e.g. "Select request 7". */
  label: (row: T) => string;
}

/**
 * The app's tables: a caption, a header row, one row per item and an optional footer, in a
 * card that stacks each row into a labelled card on narrow screens (`cards`, the default).
 * `empty` is shown instead of a table without rows.
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  caption,
  captionHidden = false,
  labelledBy,
  empty,
  footer,
  selection,
  rowProps,
  cards = true,
  busy = false,
  className = cards ? 'data-table data-table--cards' : 'data-table',
  wrapperClassName = 'table-card',
}: {
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, index: number) => Key;
  caption?: ReactNode;
  /** A caption for screen readers only (the page's heading says it already). */
  captionHidden?: boolean;
  /** The id of a heading that names the table, instead of a caption. */
  labelledBy?: string;
  empty?: ReactNode;
  /** Rows of a `<tfoot>`, e.g. totals. */
  footer?: ReactNode;
  selection?: Selection<T>;
  /** Attributes of a row: handlers, a class, `data-` attributes for tests and styles. */
  rowProps?: (row: T) => RowProps;
  cards?: boolean;
  /** Dims the table while newer rows load. */
  busy?: boolean;
  className?: string;
  wrapperClassName?: string;
}) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  const label = (column: Column<T>) => (cards ? column.label : undefined);
  return (
    <div
      className={busy ? `${wrapperClassName} is-busy` : wrapperClassName}
      aria-busy={busy || undefined}
    >
      <table className={className} aria-labelledby={labelledBy}>
        {caption !== undefined && (
          <caption className={captionHidden ? 'visually-hidden' : undefined}>{caption}</caption>
        )}
        <thead>
          <tr>
            {selection && <SelectAllHeader rows={rows} selection={selection} />}
            {columns.map((column) => (
              <th key={column.label} scope="col" className={column.numeric ? 'numeric' : undefined}>
                {column.header === 'hidden' ? (
                  <span className="visually-hidden">{column.label}</span>
                ) : (
                  (column.header ?? column.label)
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={rowKey(row, index)} {...rowProps?.(row)}>
              {selection && (
                <td data-label={cards ? 'Select' : undefined}>
                  <input
                    type="checkbox"
                    aria-label={selection.label(row)}
                    checked={selection.isSelected(row)}
                    onChange={() => selection.onToggle(row)}
                  />
                </td>
              )}
              {columns.map((column) => {
                const classes = [column.numeric ? 'numeric' : '', column.className ?? '']
                  .filter(Boolean)
                  .join(' ');
                const Cell = column.rowHeader ? 'th' : 'td';
                return (
                  <Cell
                    key={column.label}
                    scope={column.rowHeader ? 'row' : undefined}
                    data-label={label(column)}
                    className={classes || undefined}
                  >
                    {column.cell(row, index)}
                  </Cell>
                );
              })}
            </tr>
          ))}
        </tbody>
        {footer !== undefined && <tfoot>{footer}</tfoot>}
      </table>
    </div>
  );
}

function SelectAllHeader<T>({ rows, selection }: { rows: readonly T[]; selection: Selection<T> }) {
  const { onToggleAll } = selection;
  return (
    <th scope="col">
      {onToggleAll ? (
        <input
          type="checkbox"
          aria-label="Select all shown"
          checked={rows.every((row) => selection.isSelected(row))}
          onChange={(event) => onToggleAll(event.target.checked)}
        />
      ) : (
        <span className="visually-hidden">Select</span>
      )}
    </th>
  );
}
