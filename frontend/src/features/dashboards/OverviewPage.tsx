import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';

import { syntheticHistoryQuery } from '../../lib/api/demo/syntheticHistory';
import { dailyQuery } from '../../lib/api/metrics/daily';
import { metricKeys } from '../../lib/api/metrics/keys';
import { saveTargets, targetsQuery } from '../../lib/api/metrics/targets';
import { throughputQuery } from '../../lib/api/metrics/throughput';
import { todayQuery } from '../../lib/api/metrics/today';
import type {
  ChartedDirection,
  Daily,
  Targets,
  Throughput,
  Today,
  TodayDirection,
} from '../../lib/api/types';
import { Loaded } from '../../components/Loaded';
import { WorstCollectionsPanel } from '../../components/WorstCollectionsPanel';
import { formatAge, formatBytes, formatPercent, formatRate, formatUtc } from '../../lib/format';
import { DailyChart } from './charts/DailyChart';
import { ThroughputChart } from './charts/ThroughputChart';

const DIRECTION_NAMES: Record<ChartedDirection, string> = {
  ingest: 'Ingest',
  distribution: 'Distribution',
};

export function OverviewPage() {
  const today = useQuery(todayQuery());
  const daily = useQuery(dailyQuery(30));
  const throughput = useQuery(throughputQuery(48));

  return (
    <section className="page" aria-labelledby="overview-heading">
      <div className="page__header">
        <h1 id="overview-heading">Throughput</h1>
        <p className="page__lead">Bytes in and out against the daily targets.</p>
        <SyntheticNote />
      </div>

      <section className="dash-section" aria-labelledby="today-heading">
        <h2 id="today-heading">Today</h2>
        <Loaded query={today} what="today’s figures">
          {(data) => <TodayPanel today={data} />}
        </Loaded>
        <TargetsForm />
        <WorstCollectionsPanel />
      </section>

      <section className="dash-section" aria-labelledby="daily-heading">
        <h2 id="daily-heading">Last 30 days</h2>
        <Loaded query={daily} what="the daily totals">
          {(data) => (
            <div className="chart-grid">
              <DailyChart daily={data} direction="ingest" />
              <DailyChart daily={data} direction="distribution" />
            </div>
          )}
        </Loaded>
      </section>

      <section className="dash-section" aria-labelledby="throughput-heading">
        <h2 id="throughput-heading">Last 48 hours</h2>
        <Loaded query={throughput} what="the hourly throughput">
          {(data) => <HourlyCharts throughput={data} targets={daily.data?.targets} />}
        </Loaded>
      </section>
    </section>
  );
}

/** MB/s the daily target needs on average. */
function meanRate(bytesPerDay: number | undefined): number | undefined {
  return bytesPerDay === undefined ? undefined : bytesPerDay / 86_400 / 1e6;
}

/**
 * Ingest and distribution each against its own target on its own scale (one axis for both hid
 * the smaller), the tape traffic beside them, and every collection's share.
 */
function HourlyCharts({
  throughput,
  targets,
}: {
  throughput: Throughput;
  targets: Daily['targets'] | undefined;
}) {
  const { hours, by_direction: direction } = throughput;
  const tape = Object.fromEntries(
    Object.entries(direction).filter(([name]) => !(name in DIRECTION_NAMES)),
  );
  return (
    <div className="chart-grid">
      {(Object.keys(DIRECTION_NAMES) as ChartedDirection[]).map((name, index) => (
        <ThroughputChart
          key={name}
          title={`${DIRECTION_NAMES[name]} MB/s`}
          hours={hours}
          series={{ [name]: direction[name] ?? [] }}
          what="direction"
          target={meanRate(targets?.[name])}
          colourOffset={index}
        />
      ))}
      <ThroughputChart
        title="Tape MB/s (migrate and recall)"
        hours={hours}
        series={tape}
        what="direction"
        colourOffset={2}
      />
      <ThroughputChart
        title="MB/s by collection"
        hours={hours}
        series={throughput.by_collection}
        what="collection"
      />
    </div>
  );
}

/** A demo's made-up history, said where its charts are. */
function SyntheticNote() {
  const history = useQuery(syntheticHistoryQuery());
  if (!history.data?.synthetic) return null;
  return (
    <p className="dash-note synthetic-note" role="note">
      Demo data: {history.data.note} Synthetic from {history.data.first_day} to{' '}
      {formatUtc(history.data.until)}.
    </p>
  );
}

function TodayPanel({ today }: { today: Today }) {
  return (
    <>
      <p className="dash-note">
        {today.date} (UTC), {formatAge(today.seconds_left)} left in the day.
      </p>
      <div className="card-grid">
        {(Object.keys(DIRECTION_NAMES) as ChartedDirection[]).map((direction) => {
          const figures = today.directions[direction];
          return figures ? (
            <TodayCard key={direction} name={DIRECTION_NAMES[direction]} figures={figures} />
          ) : null;
        })}
      </div>
    </>
  );
}

function TodayCard({ name, figures }: { name: string; figures: TodayDirection }) {
  const headingId = useId();
  const percent = figures.percent_of_target ?? 0;
  const surplus = figures.surplus_bytes >= 0;
  return (
    <article className="card" aria-labelledby={headingId}>
      <h3 id={headingId}>{name}</h3>
      <p className="card__big">
        {formatBytes(figures.bytes)}{' '}
        <span className="card__of">of {formatBytes(figures.target_bytes)}</span>
      </p>
      <div
        className="meter"
        role="meter"
        aria-label={`${name} so far, percent of the daily target`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(100, percent)}
        aria-valuetext={formatPercent(figures.percent_of_target)}
      >
        <div className="meter__fill" style={{ width: `${Math.min(100, percent)}%` }} />
      </div>
      <dl className="figures">
        <div>
          <dt>Of target</dt>
          <dd>{formatPercent(figures.percent_of_target)}</dd>
        </div>
        <div>
          <dt>Rate, last 5 min</dt>
          <dd>{formatRate(figures.rate_b_s)}</dd>
        </div>
        <div>
          <dt>Projected by midnight</dt>
          <dd>{formatBytes(figures.projected_bytes)}</dd>
        </div>
        <div>
          <dt>{surplus ? 'Surplus' : 'Shortfall'}</dt>
          <dd className={surplus ? 'good' : 'bad'}>
            {formatBytes(Math.abs(figures.surplus_bytes))}
          </dd>
        </div>
      </dl>
    </article>
  );
}

function TargetsForm() {
  const targets = useQuery(targetsQuery());
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<{ ingest: string; distribution: string } | null>(null);
  const ingestId = useId();
  const outId = useId();
  const save = useMutation({
    mutationFn: (values: Targets) => saveTargets(values),
    onSuccess: async (saved) => {
      queryClient.setQueryData(targetsQuery().queryKey, saved);
      setDraft(null);
      await queryClient.invalidateQueries({ queryKey: metricKeys.all });
    },
  });

  if (targets.isError) {
    return <p className="dash-note">Daily targets could not be read: {targets.error.message}</p>;
  }
  // The saved targets until the operator types.
  const shown =
    draft ??
    (targets.data
      ? { ingest: String(targets.data.ingest), distribution: String(targets.data.distribution) }
      : null);
  if (!shown) return null;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!shown) return;
    save.mutate({ ingest: Number(shown.ingest), distribution: Number(shown.distribution) });
  }

  return (
    <form className="targets-form" onSubmit={onSubmit} aria-label="Daily targets">
      <div className="field field--inline">
        <label htmlFor={ingestId}>Ingest target (TB/day)</label>
        <input
          id={ingestId}
          type="number"
          min={0}
          step="any"
          inputMode="decimal"
          value={shown.ingest}
          onChange={(event) => setDraft({ ...shown, ingest: event.target.value })}
        />
      </div>
      <div className="field field--inline">
        <label htmlFor={outId}>Distribution target (TB/day)</label>
        <input
          id={outId}
          type="number"
          min={0}
          step="any"
          inputMode="decimal"
          value={shown.distribution}
          onChange={(event) => setDraft({ ...shown, distribution: event.target.value })}
        />
      </div>
      <button type="submit" className="button button--small" disabled={save.isPending}>
        Save targets
      </button>
      <p className="targets-form__result" aria-live="polite">
        {save.isSuccess && !save.isPending ? 'Targets saved.' : ''}
      </p>
      {save.isError && (
        <p className="targets-form__error" role="alert">
          {save.error.message}
        </p>
      )}
    </form>
  );
}
