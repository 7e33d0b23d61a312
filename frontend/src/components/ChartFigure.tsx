import { useId, type ReactNode } from 'react';

export interface DataTable {
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
  table: DataTable;
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
        <div className="table-scroll">
          <table className="data-table">
            <caption className="visually-hidden">{table.caption}</caption>
            <thead>
              <tr>
                {table.columns.map((column, index) => (
                  <th key={column} scope="col" className={index ? 'numeric' : undefined}>
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row) => (
                <tr key={String(row[0])}>
                  {row.map((cell, index) =>
                    index === 0 ? (
                      <th key={index} scope="row">
                        {cell}
                      </th>
                    ) : (
                      <td key={index} className="numeric">
                        {cell}
                      </td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
