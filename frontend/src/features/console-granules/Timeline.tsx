import type { GranuleEvent } from '../../lib/api/types';
import { formatDateTime } from '../../lib/format';

/** A granule's history, oldest first: each event's time, source, words, who and why. */
export function Timeline({ events, labelledBy }: { events: GranuleEvent[]; labelledBy: string }) {
  if (events.length === 0) return <p className="dash-note">No events yet.</p>;
  return (
    <ol className="cg-timeline" aria-labelledby={labelledBy}>
      {events.map((event, index) => (
        <li key={index}>
          <time dateTime={event.at}>{formatDateTime(event.at)}</time>
          <span className="cg-timeline__kind">{event.kind}</span>
          <span>
            {event.text}
            {event.actor && <span className="muted"> · by {event.actor}</span>}
          </span>
          {event.reason && <span className="cg-timeline__why">{event.reason}</span>}
        </li>
      ))}
    </ol>
  );
}
