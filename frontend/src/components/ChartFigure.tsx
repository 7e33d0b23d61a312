import { useId, type ReactNode } from 'react';

import { DataTable, type Column } from './DataTable';

/** A chart's numbers: the first column names each row, the others are figures. */
export interface ChartTable {
  caption: string;
  columns: string[];
  rows: (string | number)[][];
}

/**
 * A chart with what a screen reader or a keyboard user needs instead of the canvas: a one-line
 * summary (also the canvas' accessible name) and the numbers as a table behind a disclosure.
 */
export function ChartFigure({
  title,
  summary,
  table,
  children,
  headingLevel = 3,
}: {
  title: string;
  summary: string;
  table: ChartTable;
  children: ReactNode;
  headingLevel?: 2 | 3;
}) {
  const titleId = useId();
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  return (
    <figure className="chart-figure" aria-labelledby={titleId}>
      <Heading id={titleId} className="chart-figure__title">
        {title}
      </Heading>
      <div className="chart-figure__canvas">{children}</div>
      <figcaption className="chart-figure__summary">{summary}</figcaption>
      <details className="chart-figure__data">
        <summary>Show the numbers</summary>
        <DataTable
          columns={table.columns.map((name, index): Column<(string | number)[]> => ({
            label: name,
            rowHeader: index === 0,
            numeric: index > 0,
            cell: (row) => row[index],
          }))}
          rows={table.rows}
          rowKey={(row) => String(row[0])}
          caption={table.caption}
          captionHidden
          cards={false}
          wrapperClassName="table-scroll"
        />
      </details>
    </figure>
  );
}
