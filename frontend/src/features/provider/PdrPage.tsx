import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link, useParams } from 'react-router';

import { pdrQuery } from '../../lib/api/ingest/pdr';
import { pdrIsFinal } from '../../lib/api/ingest/pdrs';
import { idFromUrl, PROVIDER_REFRESH_MS } from '../../lib/api/ingest/requests';
import type { Pdr } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { formatDateTime } from '../../lib/format';
import { IngestStateBadge } from './IngestStates';
import { readAnswer, type Answer, type Disposition } from './answers';

export function PdrPage() {
  const id = Number(useParams().id);
  const pdr = useQuery(pdrQuery(id));
  return (
    <section className="page" aria-labelledby="pdr-heading">
      <p className="breadcrumb">
        <Link to="/provider/pdrs">PDRs</Link> /
      </p>
      <h1 id="pdr-heading" className="wrap">
        {pdr.data ? pdr.data.name : `PDR ${id}`}{' '}
        {pdr.data && <IngestStateBadge state={pdr.data.state} />}
      </h1>
      <Loaded query={pdr} what={`PDR ${id}`}>
        {(data) => <PdrDetail pdr={data} />}
      </Loaded>
    </section>
  );
}

function PdrDetail({ pdr }: { pdr: Pdr }) {
  const requestId = idFromUrl(pdr.request);
  const text = pdr.pan || pdr.pdrd;
  const kind = pdr.pan ? 'PAN' : 'PDRD';
  return (
    <>
      {pdr.detail && (
        <p className={pdr.state === 'rejected' ? 'notice notice--error' : 'notice notice--ok'}>
          {pdr.detail}
        </p>
      )}
      <dl className="figures summary-list">
        <div>
          <dt>Provider</dt>
          <dd>{pdr.provider}</dd>
        </div>
        <div>
          <dt>Disposition</dt>
          <dd className="mono">{pdr.disposition || '—'}</dd>
        </div>
        <div>
          <dt>Found at</dt>
          <dd className="mono wrap">{pdr.path || 'sent to the API'}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd>{formatDateTime(pdr.created_at)}</dd>
        </div>
        <div>
          <dt>Last change</dt>
          <dd>{formatDateTime(pdr.updated_at)}</dd>
        </div>
        <div>
          <dt>Ingest request</dt>
          <dd>
            {requestId === null ? (
              'none'
            ) : (
              <Link to={`/provider/requests/${requestId}`}>
                Request {requestId}: per-granule state
              </Link>
            )}
          </dd>
        </div>
      </dl>
      {!pdrIsFinal(pdr) && (
        <p className="hint">
          The granules are still moving; the PAN appears here when they are done (refreshing every{' '}
          {PROVIDER_REFRESH_MS / 1000} seconds).
        </p>
      )}
      {text && <AnswerView kind={kind} text={text} />}
    </>
  );
}

function AnswerView({ kind, text }: { kind: 'PAN' | 'PDRD'; text: string }) {
  const answer = readAnswer(text);
  const headingId = useId();
  return (
    <section className="page-section" aria-labelledby={headingId}>
      <h2 id={headingId}>
        The {kind} <span className="muted small">({answer.messageType || 'answer'})</span>
      </h2>
      <Dispositions answer={answer} kind={kind} />
      <h3 className="answer-text-heading">{kind} as sent</h3>
      <pre className="answer-text" tabIndex={0} aria-label={`${kind} text`}>
        {text}
      </pre>
    </section>
  );
}

function Dispositions({ answer, kind }: { answer: Answer; kind: 'PAN' | 'PDRD' }) {
  if (answer.rows.length === 0) {
    const all = kind === 'PAN' ? 'Every file of the PDR' : 'The whole PDR';
    return (
      <p>
        {all}: <span className="mono">{answer.disposition ?? 'no disposition given'}</span>
      </p>
    );
  }
  const perFile = kind === 'PAN';
  const columns: Column<Disposition>[] = [
    {
      label: perFile ? 'File' : 'Data type',
      rowHeader: true,
      cell: (row) => <span className="mono wrap">{row.what}</span>,
    },
    ...(perFile
      ? [
          {
            label: 'Directory',
            cell: (row: Disposition) => <span className="mono wrap">{row.where || '—'}</span>,
          },
        ]
      : []),
    {
      label: 'Disposition',
      cell: (row) => (
        <span className={row.disposition === 'SUCCESSFUL' ? 'good' : 'bad'}>{row.disposition}</span>
      ),
    },
  ];
  return (
    <DataTable
      columns={columns}
      rows={answer.rows}
      rowKey={(row, index) => `${row.where}/${row.what}/${index}`}
      caption={perFile ? 'Disposition of each file' : 'Disposition of each file group'}
    />
  );
}
